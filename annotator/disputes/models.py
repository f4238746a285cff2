"""From raw grades to one final grade per pair: unanimity, discussion or a reviewer's decision.

Raw grades are never overwritten. The final grade is its own record and says where it came from.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import models
from django.db.models import Exists, OuterRef, Q
from django.utils.translation import gettext_lazy as _

from annotator.grading.models import Candidate, GradingSet
from annotator.projects.models import Membership, Permission, Project

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, User


class DisputeStatus(models.TextChoices):
    # Each editor must give the basis of their grade before anyone sees anyone else's.
    AWAITING_REASONS = "awaiting_reasons", _("Waiting for every editor's reason")
    # Reasons are in; grades and reasons are revealed and each editor may revise once.
    REVEALED = "revealed", _("Revealed: editors may revise once")
    # Still no agreement: a reviewer decides.
    IN_REVIEW = "in_review", _("Waiting for a reviewer")
    SETTLED = "settled", _("Settled")


# From the reveal on, every editor of the dispute may see every grade and reason in it.
REVEALED_STATUSES = frozenset({DisputeStatus.REVEALED, DisputeStatus.IN_REVIEW, DisputeStatus.SETTLED})


def step_pending() -> Q:
    """On DisputeStatement: the editor's step its dispute waits for (a reason, then a revision or
    a keep)."""
    return Q(dispute__status=DisputeStatus.AWAITING_REASONS, reason_given_at__isnull=True) | Q(
        dispute__status=DisputeStatus.REVEALED, revised_at__isnull=True
    )


class DisputeQuerySet(models.QuerySet["Dispute"]):
    def in_project(self, project: Project) -> DisputeQuerySet:
        return self.filter(grading_set_id__in=project.set_ids())

    def involving(self, user: AbstractBaseUser | AnonymousUser) -> DisputeQuerySet:
        return self.filter(statements__editor=user)

    def visible_to(self, membership: Membership) -> DisputeQuerySet:
        """Reviewers and owners see every dispute of the project; editors only the ones they are in."""
        disputes = self.in_project(membership.project)
        if membership.may(Permission.SEE_ALL_GRADES):
            return disputes
        return disputes.involving(membership.user)

    def open(self) -> DisputeQuerySet:
        """Not settled and still able to move: a set frozen without the pair ends its dispute."""
        return self.exclude(status=DisputeStatus.SETTLED).filter(grading_set__is_open=True)

    def waiting_for_departed(self, project: Project) -> DisputeQuerySet:
        """Open disputes of `project` waiting only for the step of editors who are no longer
        active members (a deactivated account; a removal hands its disputes over by itself): a
        reviewer sends them on from their review page (`dispute_hand_to_review`). One that still
        waits for an editor who can act is theirs first: they write their reason blind."""
        active = list(
            Membership.objects.filter(project=project, user__is_active=True).values_list("user_id", flat=True)
        )
        # The steps of everyone else, found through the statements' index on their editor: people
        # who never graded here cost one probe each, where reading the project's pending steps
        # to find the departed among them read every open dispute (0.2 s at 24,000 of them).
        others = list(get_user_model().objects.exclude(pk__in=active).values_list("pk", flat=True))
        steps = DisputeStatement.objects.filter(
            editor_id__in=others, dispute__grading_set_id__in=project.set_ids()
        ).filter(step_pending())
        if not others or not steps.exists():
            return self.none()
        pending = DisputeStatement.objects.filter(dispute=OuterRef("pk")).filter(step_pending())
        return (
            self.open()
            .filter(pk__in=steps.values("dispute"))
            .exclude(Exists(pending.filter(editor_id__in=active)))
        )

    def review_queue(self) -> DisputeQuerySet:
        """Disputes a reviewer must decide: the widest disagreements first, then the oldest."""
        return self.filter(status=DisputeStatus.IN_REVIEW, grading_set__is_open=True).order_by(
            "-severity", "opened_at", "pk"
        )

    def with_pair(self) -> DisputeQuerySet:
        return self.select_related(
            "candidate__query",
            "candidate__document",
            "candidate__grading_set",
            "candidate__final_grade__decided_by",
            "escalated_by",
        )


class Dispute(models.Model):
    candidate = models.OneToOneField(Candidate, on_delete=models.PROTECT, related_name="dispute")
    # The pair's set, copied when the dispute opens (save(); a pair never changes set): a project's
    # disputes are listed, counted and ordered from this table's own index, not through its pairs.
    grading_set = models.ForeignKey(GradingSet, on_delete=models.PROTECT, related_name="+", editable=False)
    status = models.CharField(
        _("status"), max_length=20, choices=DisputeStatus.choices, default=DisputeStatus.AWAITING_REASONS
    )
    # max - min of the raw grades when the dispute opened: 1, 2 or 3.
    severity = models.PositiveSmallIntegerField(_("severity"))
    opened_at = models.DateTimeField(_("opened at"), auto_now_add=True)
    revealed_at = models.DateTimeField(_("revealed at"), null=True, blank=True)
    escalated_at = models.DateTimeField(_("sent to review at"), null=True, blank=True)
    # Who sent it on when an editor could no longer take their step (hand_to_review): the reviewer
    # who pressed "Send to review", or the owner whose removal of the editor did it. Empty when it
    # went to review by itself: once every editor had responded, or once the last editor still
    # able to take their step took it.
    escalated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        null=True,
        blank=True,
        verbose_name=_("sent to review by"),
    )
    settled_at = models.DateTimeField(_("settled at"), null=True, blank=True)

    objects = DisputeQuerySet.as_manager()

    class Meta:
        ordering = ["-severity", "opened_at"]
        verbose_name = _("dispute")
        verbose_name_plural = _("disputes")
        constraints = [
            models.CheckConstraint(
                condition=Q(severity__gte=1) & Q(severity__lte=3), name="dispute_severity_1_to_3"
            ),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in DisputeStatus]), name="dispute_status_valid"
            ),
        ]
        # The review queue's order within a set and status, and every count by status.
        indexes = [
            models.Index(
                fields=["grading_set", "status", "-severity", "opened_at", "id"], name="dispute_set_queue"
            )
        ]

    def __str__(self) -> str:
        return f"{self.candidate} ({self.get_status_display()})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.grading_set_id is None:
            self.grading_set_id = self.candidate.grading_set_id
        super().save(*args, **kwargs)

    # Reads. They go through `statements.all()` so a `prefetch_related("statements")` serves them.

    @property
    def is_revealed(self) -> bool:
        return self.status in REVEALED_STATUSES

    @property
    def is_settled(self) -> bool:
        return self.status == DisputeStatus.SETTLED

    def statement_for(self, user: AbstractBaseUser | AnonymousUser) -> DisputeStatement | None:
        return next((s for s in self.statements.all() if s.editor_id == user.pk), None)

    def has_participant(self, user: AbstractBaseUser | AnonymousUser) -> bool:
        return self.statement_for(user) is not None

    def reasons_given(self) -> int:
        return sum(1 for s in self.statements.all() if s.has_reason)

    def current_grades(self) -> list[int]:
        """Each editor's grade as it stands: the revision if there is one, else the original."""
        return [s.current_grade for s in self.statements.all()]

    def grades_on_record(self) -> set[int]:
        """Every grade an editor put forward, originals and revisions: what a reviewer may adopt."""
        grades = set()
        for s in self.statements.all():
            grades.add(s.original_grade)
            if s.revised_grade is not None:
                grades.add(s.revised_grade)
        return grades

    def pending_statements(self) -> list[DisputeStatement]:
        """The statements whose editor's step the dispute waits for: a reason before the reveal,
        a response to it after (the same rule as `waiting_for_departed`, on loaded rows)."""
        if self.status == DisputeStatus.AWAITING_REASONS:
            return [s for s in self.statements.all() if not s.reason_given_at]
        if self.status == DisputeStatus.REVEALED:
            return [s for s in self.statements.all() if not s.revised_at]
        return []

    @property
    def was_handed_over(self) -> bool:
        """Sent to review with an editor's step missing, because they could no longer take it
        (`hand_to_review`); a dispute reaches review otherwise only once every editor responded."""
        return self.escalated_at is not None and any(
            not s.reason_given_at or not s.revised_at for s in self.statements.all()
        )

    def agreed_grade(self) -> int | None:
        current = set(self.current_grades())
        return current.pop() if len(current) == 1 else None

    # State changes. Callers hold a row lock on the dispute (see annotator/disputes/services.py).

    def reveal(self, *, at: datetime) -> None:
        if self.status != DisputeStatus.AWAITING_REASONS:
            raise ValueError(f"Only a dispute waiting for reasons can be revealed, not one {self.status}.")
        if self.reasons_given() < self.statements.count():
            raise ValueError("Every editor of the dispute must give a reason before the reveal.")
        self.status, self.revealed_at = DisputeStatus.REVEALED, at
        self.save(update_fields=["status", "revealed_at"])

    def send_to_review(self, *, at: datetime) -> None:
        if self.status != DisputeStatus.REVEALED:
            raise ValueError(f"Only a revealed dispute goes to review, not one {self.status}.")
        self.status, self.escalated_at = DisputeStatus.IN_REVIEW, at
        self.save(update_fields=["status", "escalated_at"])

    def hand_to_review(self, *, at: datetime, by: User | None) -> None:
        """An editor of the dispute left before their step: a reviewer decides on what is on record.

        Grades and reasons count as revealed from now on (the reviewer's page shows them all).
        `by` is recorded: the reviewer who sent it, or the owner who removed the editor; None when
        the last editor still able to take their step took it.
        """
        if self.status not in (DisputeStatus.AWAITING_REASONS, DisputeStatus.REVEALED):
            raise ValueError(f"Only a dispute still with its editors goes to review, not one {self.status}.")
        self.revealed_at = self.revealed_at or at
        self.status, self.escalated_at, self.escalated_by = DisputeStatus.IN_REVIEW, at, by
        self.save(update_fields=["status", "revealed_at", "escalated_at", "escalated_by"])

    def mark_settled(self, *, at: datetime) -> None:
        if self.status == DisputeStatus.SETTLED:
            raise ValueError("This dispute is already settled.")
        self.status, self.settled_at = DisputeStatus.SETTLED, at
        self.save(update_fields=["status", "settled_at"])


class DisputeStatement(models.Model):
    """One editor's side of a dispute: the basis of the grade, and at most one revision."""

    dispute = models.ForeignKey(Dispute, on_delete=models.PROTECT, related_name="statements")
    editor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    original_grade = models.PositiveSmallIntegerField(_("original grade"))
    reason = models.TextField(_("reason"), blank=True)
    # Optional: which criteria level (0-3) the editor's reading rests on.
    criteria_level = models.PositiveSmallIntegerField(_("criteria level"), null=True, blank=True)
    reason_given_at = models.DateTimeField(_("reason given at"), null=True, blank=True)
    revised_grade = models.PositiveSmallIntegerField(_("revised grade"), null=True, blank=True)
    revision_note = models.TextField(_("revision note"), blank=True)
    revised_at = models.DateTimeField(_("revised at"), null=True, blank=True)

    class Meta:
        ordering = ["dispute", "pk"]
        verbose_name = _("dispute statement")
        verbose_name_plural = _("dispute statements")
        constraints = [
            models.UniqueConstraint(fields=["dispute", "editor"], name="dispute_statement_unique_editor"),
            models.CheckConstraint(
                condition=Q(original_grade__lte=3), name="statement_original_grade_0_to_3"
            ),
            models.CheckConstraint(
                condition=Q(revised_grade__isnull=True) | Q(revised_grade__lte=3),
                name="statement_revised_grade_0_to_3",
            ),
            models.CheckConstraint(
                condition=Q(criteria_level__isnull=True) | Q(criteria_level__lte=3),
                name="statement_criteria_level_0_to_3",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dispute.candidate}: {self.editor} gave {self.original_grade}"

    @property
    def has_reason(self) -> bool:
        return self.reason_given_at is not None

    @property
    def has_responded(self) -> bool:
        """Revised, or explicitly kept the original grade, after the reveal (at most once)."""
        return self.revised_at is not None

    @property
    def changed_grade(self) -> bool:
        return self.revised_grade is not None and self.revised_grade != self.original_grade

    @property
    def current_grade(self) -> int:
        return self.revised_grade if self.revised_grade is not None else self.original_grade
