"""Two owners demoting themselves at the same moment: one of them stays owner (PostgreSQL row locks)."""

from __future__ import annotations

from annotator.models import Membership, Role
from annotator.services.members import LastOwnerError, membership_remove, membership_set_role
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
