"""Models of the annotation app, one module per area; import from here."""

from annotator.disputes.models import Dispute, DisputeStatement, DisputeStatus
from annotator.documents.models import (
    CriteriaChange,
    CriteriaVersion,
    Document,
    DocumentVersion,
    Query,
    Unit,
    content_hash,
)
from annotator.grading.models import (
    GRADE_VALUES,
    REASON_MAX_LENGTH,
    Candidate,
    CandidateSource,
    FinalGrade,
    FinalGradeRecheck,
    FinalSource,
    Grade,
    GradeHistory,
    GradingSet,
    Reservation,
    StaleReason,
)
from annotator.pools.models import Pool, PoolJudgment, PoolVersion, PoolVersionSource
from annotator.projects.models import Membership, MembershipQuerySet, Project, ProjectQuerySet, Role

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
