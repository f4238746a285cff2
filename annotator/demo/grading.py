"""Demo data for grading: the seeds' help-center query `q1` (documents A-E) and the seed 000
example as `q2` (J-A..J-D), in two open grading sets without grades. Idempotent: documents go
through the versioning upsert, everything else through get-or-create.
"""

from __future__ import annotations

from annotator.demo import DemoContext
from annotator.models import (
    Candidate,
    CandidateSource,
    CriteriaVersion,
    Document,
    GradingSet,
    Query,
)

Q1 = (
    "q1",
    "报名已经提交，如何修改联系电话，是否有截止时间？",
    "修改入口、联系电话字段、截止时间（entry point, phone field, deadline）",
)

# (external ID, title, body). Expected grades from the seeds: A3 B2 C1 D0 E0.
Q1_DOCUMENTS = [
    (
        "A",
        "修改已提交报名中的联系电话",
        "报名提交后，如需修改联系电话，请登录后进入“我的报名”，在对应活动的报名记录右侧点击“修改信息”。\n\n"
        "在“联系电话”一栏填写新的手机号码，按页面提示获取并填写短信验证码，然后点击“保存修改”。"
        "保存成功后，报名记录中会显示新号码，后续通知将发送到新号码。\n\n"
        "截止时间：联系电话可在活动开始前 48 小时之前自行修改；超过该时间，“修改信息”按钮将变为灰色，"
        "无法再修改。",
    ),
    (
        "B",
        "提交报名后如何申请修改信息",
        "报名信息提交后，如发现填写有误，可以申请修改。\n\n"
        "请在“我的报名”中打开报名详情，点击页面底部的“申请修改”，写明需要修改的项目和正确内容后提交。"
        "工作人员会在 1 至 2 个工作日内审核，审核结果将通过站内消息通知您。\n\n"
        "如有疑问，也可以联系在线客服协助处理。",
    ),
    (
        "C",
        "报名表填写说明",
        "填写报名表时，请准确填写姓名、证件号码和联系电话。\n\n"
        "联系电话请填写本人常用的手机号码，用于接收报名确认短信和活动通知。"
        "提交前请仔细核对各项信息，确认无误后再点击“提交报名”。",
    ),
    (
        "D",
        "秋季城市徒步活动火热报名中",
        "秋季城市徒步活动现已开放报名！本次活动全程约 10 公里，沿途经过老城区和滨江步道，"
        "适合家庭和朋友结伴参加。\n\n"
        "完成全程的参与者将获得纪念奖牌和活动 T 恤，名额有限，先到先得，快来报名吧！",
    ),
    (
        "E",
        "活动场地交通指南",
        "活动场地位于会展中心 3 号馆。\n\n"
        "地铁：乘坐地铁 2 号线至“会展中心站”，从 B 出口步行约 5 分钟即可到达。\n"
        "公交：乘坐 15 路、32 路至“会展中心北门”站下车。\n"
        "自驾：会展中心地下停车场可停车，收费标准以现场公示为准。",
    ),
]

Q2 = (
    "q2",
    "计算 NDCG 时，理想排序（IDCG）应该来自哪一份文档集合？",
    "固定的完整评估集合、候选内归一化的误区、"
    "示例数值（fixed judgment set, candidate-only pitfall, worked numbers）",
)

# The seed 000 example: grades J-A 3, J-B 2, J-C 1, J-D 0.
Q2_DOCUMENTS = [
    (
        "J-A",
        "NDCG 的理想分母必须来自固定的评估集合",
        "计算 NDCG 时，IDCG 应来自比较之前就固定好的完整评估集合（判断池），"
        "把集合中所有文档的等级从高到低排列，取前 K 个计算。"
        "不能只用系统返回的候选来构造理想排序。\n\n"
        "例：评估集合 A3、B2、C1、D0，系统返回 [B, C]，K=2。DCG = 2 + 1/log2(3) ≈ 2.6309，"
        "IDCG = 3 + 2/log2(3) ≈ 4.2619，NDCG ≈ 0.6173。若只用候选 [B, C] 计算理想排序，分母也变成 2.6309，"
        "NDCG 就成了 1，"
        "这只说明候选内排得好，不代表检索找到了最好的文档。",
    ),
    (
        "J-B",
        "NDCG 的基本计算方法",
        "NDCG 是把 DCG 除以理想排序下的 DCG（IDCG）得到的归一化分数。\n\n"
        "DCG@K 把前 K 个位置的相关性增益按位置折损后相加：第 i 位除以 log2(i+1)，位置从 1 开始计数。"
        "理想排序就是把相关性等级从高到低排列后的顺序。",
    ),
    (
        "J-C",
        "常见的排序评测指标简介",
        "评价搜索结果时，常用的指标有 Precision、Recall、MRR 和 NDCG 等。\n\n"
        "Precision 关注返回结果中有多少是相关的，Recall 关注相关资料找回了多少，"
        "MRR 关注第一个相关结果出现的位置，NDCG 则同时考虑相关性等级和排列位置。",
    ),
    (
        "J-D",
        "如何重置登录密码",
        "忘记密码时，请在登录页点击“忘记密码”，输入注册时使用的手机号码并获取验证码，然后设置新的密码即可。",
    ),
]

SETS = [
    ("Phone number change", "报名后修改联系电话：种子示例的五篇帮助中心资料。", Q1, Q1_DOCUMENTS),
    ("Seed 000", "种子 000 的四篇虚构文档（J-A 到 J-D）。", Q2, Q2_DOCUMENTS),
]


def build(ctx: DemoContext) -> None:
    project = ctx.project
    owner = ctx.users["owner"]
    CriteriaVersion.objects.current_for(project)  # version 1: the default text, in both languages
    for set_name, description, (query_id, text, need), documents in SETS:
        query, _ = Query.objects.update_or_create(
            project=project, external_id=query_id, defaults={"text": text, "information_need": need}
        )
        grading_set, _ = GradingSet.objects.get_or_create(
            project=project,
            name=set_name,
            defaults={"description": description, "required_grades": 2, "created_by": owner},
        )
        for external_id, title, body in documents:
            document, _ = Document.upsert(project=project, external_id=external_id, title=title, body=body)
            Candidate.objects.get_or_create(
                grading_set=grading_set,
                query=query,
                document=document,
                defaults={"source": CandidateSource.MANUAL, "added_by": owner},
            )
