"""Models of the annotation app, one module per area; import from here."""

from annotator.models.disputes import (
    Dispute,
    DisputeStatement,
    DisputeStatus,
    FinalGrade,
    FinalGradeRecheck,
    FinalSource,
)
from annotator.models.documents import (
    CriteriaChange,
    CriteriaVersion,
    Document,
    DocumentVersion,
    Query,
    Unit,
    content_hash,
)
from annotator.models.grading import (
    GRADE_VALUES,
    REASON_MAX_LENGTH,
    Candidate,
    CandidateSource,
    Grade,
    GradeHistory,
    GradingSet,
    Reservation,
    StaleReason,
)
from annotator.models.pools import Pool, PoolJudgment, PoolVersion, PoolVersionSource
from annotator.models.projects import Membership, MembershipQuerySet, Project, ProjectQuerySet, Role

__all__ = [
    "GRADE_VALUES",
    "REASON_MAX_LENGTH",
    "Candidate",
    "CandidateSource",
    "CriteriaChange",
    "CriteriaVersion",
    "Dispute",
    "DisputeStatement",
    "DisputeStatus",
    "Document",
    "DocumentVersion",
    "FinalGrade",
    "FinalGradeRecheck",
    "FinalSource",
    "Grade",
    "GradeHistory",
    "GradingSet",
    "Membership",
    "MembershipQuerySet",
    "Pool",
    "PoolJudgment",
    "PoolVersion",
    "PoolVersionSource",
    "Project",
    "ProjectQuerySet",
    "Query",
    "Reservation",
    "Role",
    "StaleReason",
    "Unit",
    "content_hash",
]
