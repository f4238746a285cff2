"""Which open disputes wait only for editors who can no longer act in their project."""

from __future__ import annotations

from annotator.disputes.models import Dispute
from annotator.disputes.services import dispute_give_reason
from annotator.projects.models import Membership, Role
from tests.conftest import Cast
from tests.factories import disputed_pair


def test_a_dispute_waits_for_the_departed_only_once_no_active_editor_owes_a_step(cast: Cast) -> None:
    mine = disputed_pair(cast.alpha, cast.editor, cast.editor2, document="d1")
    theirs = disputed_pair(cast.alpha, cast.editor, cast.editor2, document="d2")
    dispute_give_reason(dispute=theirs, editor=cast.editor2, reason="Names the form and the deadline.")
    # ed leaves alpha but is still an active member of beta: in alpha, ed is departed.
    Membership.objects.create(project=cast.beta, user=cast.editor, role=Role.EDITOR)
    Membership.objects.filter(project=cast.alpha, user=cast.editor).delete()

    waiting = Dispute.objects.in_project(cast.alpha).waiting_for_departed(cast.alpha)

    # `mine` still waits for eve's reason, who can give it; `theirs` waits for ed alone.
    assert list(waiting) == [theirs]
    assert mine.pk not in waiting.values_list("pk", flat=True)


def test_no_dispute_waits_for_the_departed_while_every_editor_is_an_active_member(cast: Cast) -> None:
    disputed_pair(cast.alpha, cast.editor, cast.editor2, document="d1")

    assert not Dispute.objects.in_project(cast.alpha).waiting_for_departed(cast.alpha).exists()


def test_a_deactivated_account_is_departed_in_every_project(cast: Cast) -> None:
    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, document="d1")
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason="Names the form and the deadline.")
    cast.editor.is_active = False
    cast.editor.save(update_fields=["is_active"])

    assert list(Dispute.objects.in_project(cast.alpha).waiting_for_departed(cast.alpha)) == [dispute]
