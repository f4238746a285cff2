"""Demo data for disputes: both editors grade both demo sets through `grade_submit`; on q1 / B
they differ (2 against 3), give their reasons and keep their grades, so the dispute waits for a
reviewer. Idempotent; without the grading step's data it logs a warning and adds nothing.
"""

from __future__ import annotations

import logging

from django.contrib.auth.models import User

from annotator.demo import DemoContext
from annotator.disputes.services import dispute_give_reason, dispute_revise
from annotator.grading.services import grade_submit
from annotator.models import Candidate, Dispute, DisputeStatus, Grade, Project

log = logging.getLogger(__name__)

PHONE_SET, SEED_SET = "Phone number change", "Seed 000"

A_REASON = (
    "说明了提交后如何申请修改，但没有截止时间。 / Explains how to request a change after submitting, "
    "but not the deadline: an important condition is missing."
)
B_REASON = (
    "写明了修改入口和联系电话字段，已提交的读者照着就能改。 / Names where to request the change and the "
    "phone field: a reader who already submitted can act on it."
)


def _pairs(project: Project, set_name: str) -> dict[str, Candidate]:
    """The candidates of the grading step's set `set_name`, by document ID (empty if it is missing)."""
    candidates = Candidate.objects.filter(grading_set__project=project, grading_set__name=set_name)
    return {c.document.external_id: c for c in candidates.select_related("document")}


def _grade(candidate: Candidate, editor: User, value: int, reason: str = "") -> None:
    if not Grade.objects.filter(candidate=candidate, editor=editor).exists():
        grade_submit(candidate=candidate, editor=editor, value=value, reason=reason)


def build(ctx: DemoContext) -> None:
    editor_a, editor_b = ctx.users["editor-a"], ctx.users["editor-b"]
    phone = _pairs(ctx.project, PHONE_SET)
    seed = _pairs(ctx.project, SEED_SET)
    if not {"A", "B", "C", "D", "E"} <= phone.keys() or not {"J-A", "J-B", "J-C", "J-D"} <= seed.keys():
        log.warning("demo: the grading step made no demo sets; no grades or dispute added")
        return

    for doc_id, value in (("A", 3), ("C", 1), ("D", 0), ("E", 0)):
        for editor in (editor_a, editor_b):
            _grade(phone[doc_id], editor, value)
    for doc_id, value in (("J-A", 3), ("J-B", 2), ("J-C", 1), ("J-D", 0)):
        for editor in (editor_a, editor_b):
            _grade(seed[doc_id], editor, value)

    _grade(phone["B"], editor_a, 2, A_REASON)
    _grade(phone["B"], editor_b, 3, B_REASON)
    dispute = Dispute.objects.filter(candidate=phone["B"]).first()
    if dispute is None:
        return  # the pair was settled some other way on this database: nothing to stage
    for editor, reason, level in ((editor_a, A_REASON, 2), (editor_b, B_REASON, 3)):
        statement = dispute.statements.filter(editor=editor).first()
        dispute.refresh_from_db()
        if (
            statement is not None
            and not statement.has_reason
            and dispute.status == DisputeStatus.AWAITING_REASONS
        ):
            dispute_give_reason(dispute=dispute, editor=editor, reason=reason, criteria_level=level)
    for editor in (editor_a, editor_b):
        statement = dispute.statements.filter(editor=editor).first()
        dispute.refresh_from_db()
        if statement is not None and not statement.has_responded and dispute.status == DisputeStatus.REVEALED:
            # Both read the other reason and keep their grade: the reviewer decides.
            dispute_revise(dispute=dispute, editor=editor, grade=statement.original_grade)
