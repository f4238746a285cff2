"""Two owners demoting themselves at the same moment: one of them stays owner (PostgreSQL row locks)."""

from __future__ import annotations

import pytest

from annotator.models import Membership, Role
from annotator.projects.services import LastOwnerError, membership_remove, membership_set_role
from tests.concurrency import at_once, postgres_only
from tests.conftest import Cast

pytestmark = postgres_only


def test_two_owners_demoting_themselves_at_once_leave_one_owner(cast: Cast) -> None:
    Membership.objects.filter(project=cast.alpha, user=cast.reviewer).update(role=Role.OWNER)
    owners = list(Membership.objects.filter(project=cast.alpha, role=Role.OWNER))
    assert len(owners) == 2

    results = at_once(*(lambda m=m: membership_set_role(membership=m, role=Role.EDITOR) for m in owners))

    assert sorted(type(r).__name__ for r in results) == ["LastOwnerError", "Membership"]
    assert Membership.objects.filter(project=cast.alpha, role=Role.OWNER).count() == 1


def test_two_owners_removing_each_other_at_once_leave_one_owner(cast: Cast) -> None:
    Membership.objects.filter(project=cast.alpha, user=cast.reviewer).update(role=Role.OWNER)
    owners = list(Membership.objects.filter(project=cast.alpha, role=Role.OWNER))

    results = at_once(*(lambda m=m: membership_remove(membership=m, by=m.user) for m in owners))

    assert sum(isinstance(r, LastOwnerError) for r in results) == 1, results
    assert Membership.objects.filter(project=cast.alpha, role=Role.OWNER).count() == 1


def test_removing_an_editor_while_they_recheck_a_grade_neither_deadlocks_nor_loses_the_recheck(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Removal locked the grade, then (inserting history) waited for the pair; the re-check held
    the pair and waited for the grade: "deadlock detected", a 500 (review)."""
    import time

    from annotator.grading.services import grade_submit
    from annotator.models import Grade, GradeHistory
    from tests.factories import make_pairs

    (pair,) = make_pairs(cast.alpha, "A")
    grade = grade_submit(candidate=pair, editor=cast.editor2, value=2)
    Grade.objects.filter(pk=grade.pk).update(stale=True, stale_reason="document")
    original_save = Grade.save

    def slow_save(self: Grade, *args: object, **kwargs: object) -> None:
        time.sleep(0.5)  # the re-check holds the pair's row lock here
        original_save(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Grade, "save", slow_save)
    membership = Membership.objects.get(project=cast.alpha, user=cast.editor2)

    results = at_once(
        lambda: grade_submit(candidate=pair, editor=cast.editor2, value=2),
        lambda: (time.sleep(0.1), membership_remove(membership=membership, by=cast.owner))[1],
    )

    assert not any(isinstance(r, Exception) for r in results), results
    # The re-check went first, so there was nothing left to withdraw.
    assert Grade.objects.get(pk=grade.pk).stale is False
    assert not GradeHistory.objects.filter(kind=GradeHistory.Kind.WITHDRAWN).exists()


def test_two_owners_demoted_in_the_admin_at_once_leave_one_owner(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: the admin checked "last owner" without the project's lock; both posts passed."""
    import time

    from django.test import Client
    from django.urls import reverse

    from tests.conftest import make_user

    Membership.objects.filter(project=cast.alpha, user=cast.reviewer).update(role=Role.OWNER)
    owners = list(Membership.objects.filter(project=cast.alpha, role=Role.OWNER))
    root = make_user("root", is_staff=True, is_superuser=True)
    real_save = Membership.save

    def slow_save(self: Membership, *args: object, **kwargs: object) -> None:
        time.sleep(0.3)  # between the check and the commit: the other post arrives meanwhile
        real_save(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Membership, "save", slow_save)

    def demote(membership: Membership) -> int:
        client = Client()
        client.force_login(root)
        url = reverse("admin:annotator_membership_change", args=[membership.pk])
        return client.post(url, {"role": Role.EDITOR}).status_code

    results = at_once(*(lambda m=m: demote(m) for m in owners))

    assert sorted(results) == [200, 302], results  # one saved (redirect), one form error
    assert Membership.objects.filter(project=cast.alpha, role=Role.OWNER).count() == 1


def test_removing_an_editor_while_they_answer_the_reveal_keeps_their_answer(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: the disputes to hand over were chosen before their locks; one settled meanwhile
    was then handed over anyway: ValueError, a 500."""
    import time

    from annotator.disputes import services as dispute_service
    from annotator.disputes.services import dispute_give_reason, dispute_revise
    from annotator.models import Dispute, DisputeStatus
    from tests.factories import disputed_pair

    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (2, 3))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason="The deadline is missing.")
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason="Complete enough.")
    dispute_revise(dispute=dispute, editor=cast.editor, grade=2)  # keeps 2: waits for editor2's answer
    real = dispute_service.criteria_of_grades

    def slow(candidate_id: int) -> object:
        time.sleep(0.4)  # the revision holds the dispute's lock while the removal arrives
        return real(candidate_id)

    monkeypatch.setattr(dispute_service, "criteria_of_grades", slow)
    membership = Membership.objects.get(project=cast.alpha, user=cast.editor2)
    results = at_once(
        lambda: dispute_revise(dispute=dispute, editor=cast.editor2, grade=2),  # agrees: settled
        lambda: (time.sleep(0.1), membership_remove(membership=membership, by=cast.owner))[1],
    )
    assert not any(isinstance(r, Exception) for r in results), results
    assert Dispute.objects.get(pk=dispute.pk).status == DisputeStatus.SETTLED
    assert results[1].disputes_to_review == 0
