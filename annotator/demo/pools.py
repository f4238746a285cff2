"""Demo data for pools: the reviewer settles the dispute on q1 / B as 2, then both demo sets are
frozen as v1 of their pools. Idempotent; what the earlier steps did not produce (a partial
checkout) is skipped, not failed on.
"""

from __future__ import annotations

import logging

from annotator.demo import DemoContext
from annotator.disputes.services import dispute_settle
from annotator.models import Dispute, DisputeStatus, GradingSet, PoolVersion
from annotator.pools.freeze import freeze_preview, pool_freeze

log = logging.getLogger(__name__)

SETS = ("Phone number change", "Seed 000")
B_NOTE = (
    "说明了提交后如何申请修改，但没有截止时间：缺少一个重要条件，按标准给 2 分。"
    " / Explains how to request a change after submitting but gives no deadline: an important condition "
    "is missing, so 2 by the criteria."
)


def build(ctx: DemoContext) -> None:
    reviewer = ctx.users["reviewer"]
    dispute = (
        Dispute.objects.filter(
            candidate__grading_set__project=ctx.project,
            candidate__grading_set__name="Phone number change",
            candidate__query__external_id="q1",
            candidate__document__external_id="B",
        )
        .select_related("candidate")
        .first()
    )
    if dispute is not None and dispute.status == DisputeStatus.IN_REVIEW:
        dispute_settle(dispute=dispute, by=reviewer, grade=2, note=B_NOTE)

    for name in SETS:
        grading_set = GradingSet.objects.filter(project=ctx.project, name=name).first()
        if grading_set is None or PoolVersion.objects.filter(grading_set=grading_set).exists():
            continue
        preview = freeze_preview(grading_set)
        if preview.blockers or not preview.ready:
            log.warning(
                "demo: %s is not ready to freeze (%d pairs blocked); skipped", name, len(preview.blockers)
            )
            continue
        pool_freeze(grading_set=grading_set, by=reviewer)
