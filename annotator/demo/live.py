"""Work in progress for the demo, so `make run` shows every role something to do: an open set on
a third question, graded by `editor-b` only, and one disputed pair waiting for `reviewer`.
Idempotent: nothing is graded twice.
"""

from __future__ import annotations

from annotator.demo import DemoContext
from annotator.disputes.services import dispute_give_reason, dispute_revise
from annotator.grading.services import grade_submit
from annotator.models import Candidate, CandidateSource, Document, Grade, GradingSet, Query

QUERY = (
    "q3",
    "报名成功后还能取消吗？退款怎么办理，多久到账？",
    "取消入口、退款方式、退款到账时限（cancel entry, refund method, refund time）",
)

# (external ID, title, body, editor-b's grade, editor-b's reason)
DOCUMENTS = [
    (
        "K",
        "取消报名与退款",
        "登录后进入“我的报名”，在对应活动右侧点击“取消报名”。\n\n"
        "活动开始 48 小时前取消可全额退款，款项原路退回，一般 3 至 5 个工作日到账；"
        "48 小时内取消不予退款。",
        3,
        "入口、退款方式和到账时限都有。",
    ),
    (
        "L",
        "报名规则说明",
        "每位用户同一活动限报一次。报名成功后如需取消，请在活动开始前操作，逾期视为放弃。\n\n"
        "退款规则以活动页面公告为准。",
        2,
        "说明可以取消，但没有退款方式和到账时间。",
    ),
    (
        "M",
        "活动常见问题",
        "活动是否收费、能否带家属、是否提供证书等常见问题汇总。费用问题请查看各活动详情页。",
        1,
        "只是背景，没有回答取消或退款。",
    ),
]

# The pair the editors disagree on: editor-a reads L as background only.
DISPUTED = ("L", 1, "只说了可以取消，没说怎么退款，我认为只算背景。")
SET_NAME = "Cancellation and refunds"


def build(ctx: DemoContext) -> None:
    project, owner = ctx.project, ctx.users["owner"]
    editor_a, editor_b = ctx.users["editor-a"], ctx.users["editor-b"]
    query_id, text, need = QUERY
    query, _ = Query.objects.update_or_create(
        project=project, external_id=query_id, defaults={"text": text, "information_need": need}
    )
    grading_set, _ = GradingSet.objects.get_or_create(
        project=project,
        name=SET_NAME,
        defaults={
            "description": "进行中的评分集：取消报名与退款。",
            "required_grades": 2,
            "created_by": owner,
        },
    )
    candidates = {}
    for external_id, title, body, _, _ in DOCUMENTS:
        document, _ = Document.upsert(project=project, external_id=external_id, title=title, body=body)
        candidates[external_id], _ = Candidate.objects.get_or_create(
            grading_set=grading_set,
            query=query,
            document=document,
            defaults={"source": CandidateSource.MANUAL, "added_by": owner},
        )
    for external_id, _, _, grade, reason in DOCUMENTS:
        candidate = candidates[external_id]
        if not Grade.objects.filter(candidate=candidate, editor=editor_b).exists():
            grade_submit(candidate=candidate, editor=editor_b, value=grade, reason=reason)

    doc_id, grade_a, reason_a = DISPUTED
    candidate = candidates[doc_id]
    if not Grade.objects.filter(candidate=candidate, editor=editor_a).exists():
        grade_submit(candidate=candidate, editor=editor_a, value=grade_a, reason=reason_a)
        dispute = candidate.dispute
        dispute_give_reason(dispute=dispute, editor=editor_a, reason=reason_a, criteria_level=1)
        dispute_give_reason(dispute=dispute, editor=editor_b, reason=DOCUMENTS[1][4], criteria_level=2)
        # Both keep their grade after the reveal, so the pair goes to the reviewer queue.
        dispute.refresh_from_db()
        dispute_revise(dispute=dispute, editor=editor_a, grade=grade_a)
        dispute.refresh_from_db()
        dispute_revise(dispute=dispute, editor=editor_b, grade=DOCUMENTS[1][3])
