"""Changing who may do what in a project: roles, a new project, removing a member.

Nothing waits for a removed member forever: their pending re-checks are withdrawn and their
waiting disputes go to a reviewer. No change leaves a project without an active owner; the check
and the write share a lock on the project's row, so two owners demoting each other cannot both win.
"""

from __future__ import annotations

from typing import NamedTuple

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotator.disputes.services import departed_editors
from annotator.models import Candidate, Dispute, Grade, GradeHistory, Membership, Project, Role
from annotator.projects.models import validate_language_tag


class LastOwnerError(Exception):
    """The change would leave the project without an active owner."""

    def __init__(self) -> None:
        super().__init__(_("A project needs at least one owner: make someone else owner first."))


def _locked(membership: Membership) -> Membership:
    """The membership as it is now, with its project's row locked until the transaction ends."""
    Project.objects.select_for_update().filter(pk=membership.project_id).first()
    return Membership.objects.select_related("user", "project").get(pk=membership.pk)


def membership_set_role(*, membership: Membership, role: Role | str) -> Membership:
    with transaction.atomic():
        current = _locked(membership)
        if role != Role.OWNER and current.is_last_owner:
            raise LastOwnerError
        current.role = role
        current.save(update_fields=["role"])
    return current


class Removal(NamedTuple):
    withdrawn: int  # their grades awaiting re-check, withdrawn
    disputes_to_review: int  # disputes waiting for their step, handed to a reviewer


def membership_remove(*, membership: Membership, by: User) -> Removal:
    """Remove the member; says what had to change so that nothing waits for them forever."""
    with transaction.atomic():
        current = _locked(membership)
        if current.is_last_owner:
            raise LastOwnerError
        current.delete()
        # Disputes first: a dispute action locks its dispute before it touches the pair. With the
        # membership gone, theirs are among those waiting for someone who left.
        waiting = (
            Dispute.objects.in_project(current.project)
            .waiting_for_departed(current.project)
            .filter(statements__editor_id=current.user_id)
        )
        locked = (
            Dispute.objects.select_for_update(of=("self",))
            .filter(pk__in=waiting.values("pk"))
            .select_related("candidate__grading_set")
            .order_by("pk")
        )
        now = timezone.now()
        disputes = []
        for dispute in locked:
            # Asked again under the lock: the editor may have taken their step while this waited
            # for it (the dispute is then settled or in review, and stays so; review: a 500).
            if departed_editors(dispute):
                dispute.hand_to_review(at=now, by=by)
                disputes.append(dispute)
        # A pair waits while one of its grades awaits a re-check (pair_settle_if_complete); left
        # in place, a departed editor's stale grade would hold its pair forever.
        stale = Grade.objects.to_recheck().filter(
            editor_id=current.user_id, candidate__grading_set__project_id=current.project_id
        )
        # Pairs first, then grades, in pk order: grade_submit locks in that order too (a grade
        # row locked first here deadlocked against a re-check of it on PostgreSQL).
        list(Candidate.objects.select_for_update().filter(pk__in=stale.values("candidate_id")).order_by("pk"))
        withdrawn = list(stale.select_for_update(of=("self",)).order_by("pk"))  # "self": nullable joins
        GradeHistory.objects.bulk_create(
            GradeHistory(
                candidate_id=grade.candidate_id,
                editor_id=grade.editor_id,
                changed_by=by,
                kind=GradeHistory.Kind.WITHDRAWN,
                old_grade=grade.grade,
                old_reason=grade.reason,
                old_document_version_id=grade.document_version_id,
                old_criteria_version_id=grade.criteria_version_id,
            )
            for grade in withdrawn
        )
        Grade.objects.filter(pk__in=stale.values("pk")).delete()  # the rows locked above
    return Removal(withdrawn=len(withdrawn), disputes_to_review=len(disputes))


class ProjectCreateError(Exception):
    """The project cannot be created as asked; the message says why."""


def project_create(
    *,
    slug: str,
    name: str,
    owner: User,
    name_zh_hans: str = "",
    description: str = "",
    content_language: str = "",
) -> Project:
    """A new project with `owner` as its first owner (a project always has one)."""
    try:
        validate_slug(slug)
    except ValidationError:
        raise ProjectCreateError(
            _(
                "“%(slug)s” is not a valid slug: use letters, digits, hyphens and underscores (it appears in "
                "/p/<slug>/)."
            )
            % {"slug": slug}
        ) from None
    for field, value in (("slug", slug), ("name", name), ("name_zh_hans", name_zh_hans)):
        limit = getattr(Project._meta.get_field(field), "max_length", None) or 0
        if len(value) > limit:
            raise ProjectCreateError(
                _("%(field)s has at most %(max)d characters; this one has %(length)d.")
                % {"field": field, "max": limit, "length": len(value)}
            )
    if not name.strip():
        raise ProjectCreateError(_("A project needs a name."))
    if content_language:
        try:
            validate_language_tag(content_language)
        except ValidationError:
            raise ProjectCreateError(
                _("“%(tag)s” is not a language tag: use one such as zh-Hans, en or pt-BR.")
                % {"tag": content_language}
            ) from None
    with transaction.atomic():
        if Project.objects.filter(slug=slug).exists():
            raise ProjectCreateError(_("A project with the slug “%(slug)s” exists already.") % {"slug": slug})
        project = Project.objects.create(
            slug=slug,
            name=name.strip(),
            name_zh_hans=name_zh_hans.strip(),
            description=description.strip(),
            content_language=content_language,
        )
        Membership.objects.create(project=project, user=owner, role=Role.OWNER)
    return project
