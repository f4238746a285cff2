"""A grading project of any size, written fast: COPY on PostgreSQL, batched INSERTs on SQLite.

Shared by `bench_grading.py` and the query-plan tests. The data is shaped like a team's: most
pairs graded twice and agreed (a unanimous final grade), one in five disagreed (a dispute, most
of them settled by a reviewer, the rest at every earlier step), a few graded once or three times,
some not yet graded; grades skewed towards 0 and 1; long external IDs; a query per 200 pairs.
Rows are written with explicit keys after the tables' current maximum, then the sequences are
moved past them, so the app's own inserts go on from there. The counter triggers are dropped for
the load and the counters recounted after it (annotator/grading/counters.py), as a restore would.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.core.management.color import no_style
from django.db import connection, models, transaction
from django.db.models import Max
from django.utils import timezone

from annotator.disputes.models import Dispute, DisputeStatement, DisputeStatus
from annotator.documents.models import (
    CriteriaChange,
    CriteriaVersion,
    Document,
    DocumentVersion,
    Query,
    content_hash,
)
from annotator.grading import counters
from annotator.grading.models import Candidate, FinalGrade, FinalSource, Grade, GradeHistory, GradingSet
from annotator.projects.models import Membership, Project, Role

PASSWORD = "bench-password"
GRADE_WEIGHTS = (0.45, 0.27, 0.18, 0.10)  # grades 0, 1, 2, 3: most candidates are not relevant


@dataclass
class Seeded:
    project: Project
    grading_set: GradingSet
    owner: User
    reviewer: User
    editors: list[User]
    queries: list[int]  # query pks in external-ID order
    counts: dict[str, int] = field(default_factory=dict)


def _next_ids(model: type[models.Model]) -> Iterator[int]:
    """Keys after the table's largest, read now: no query may run while a COPY is open."""
    return itertools.count((model.objects.aggregate(m=Max("pk"))["m"] or 0) + 1)


class _Writer:
    """Rows for one model as dicts of attnames; every other column gets its field's default."""

    def __init__(self, model: type[models.Model], now: datetime) -> None:
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields]
        self.defaults: dict[str, Any] = {}
        for f in self.fields:
            if getattr(f, "auto_now", False) or getattr(f, "auto_now_add", False):
                self.defaults[f.attname] = now
            elif f.has_default():
                self.defaults[f.attname] = f.get_default()
            elif f.null:
                self.defaults[f.attname] = None
            else:
                self.defaults[f.attname] = ""

    def tuples(self, rows: Iterable[dict[str, Any]]) -> Iterator[tuple[Any, ...]]:
        prep = [(f.attname, f) for f in self.fields]
        for row in rows:
            yield tuple(
                f.get_db_prep_save(row.get(name, self.defaults[name]), connection) for name, f in prep
            )

    def write(self, rows: Iterable[dict[str, Any]]) -> int:
        table = connection.ops.quote_name(self.model._meta.db_table)
        columns = ", ".join(connection.ops.quote_name(f.column) for f in self.fields)
        n = 0
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for values in self.tuples(rows):
                        copy.write_row(values)
                        n += 1
            else:
                marks = ", ".join(["%s"] * len(self.fields))
                sql = f"INSERT INTO {table} ({columns}) VALUES ({marks})"
                batch: list[tuple[Any, ...]] = []
                for values in self.tuples(rows):
                    batch.append(values)
                    if len(batch) == 10_000:
                        cursor.executemany(sql, batch)
                        n += len(batch)
                        batch.clear()
                if batch:
                    cursor.executemany(sql, batch)
                    n += len(batch)
        return n


def _users(prefix: str, names: Sequence[str]) -> list[User]:
    password = make_password(PASSWORD)
    User.objects.bulk_create([User(username=f"{prefix}-{n}", password=password) for n in names])
    return list(User.objects.filter(username__in=[f"{prefix}-{n}" for n in names]).order_by("pk"))


def _pick_grade(rng: random.Random) -> int:
    return rng.choices(range(4), weights=GRADE_WEIGHTS)[0]


def seed_project(
    slug: str,
    *,
    queries: int,
    pairs_per_query: int = 200,
    editors: int = 20,
    seed: int = 7,
    progress: Callable[[str], None] = lambda _message: None,
) -> Seeded:
    """One project with one open set of `queries` x `pairs_per_query` pairs, graded as a team would.

    The first editor has graded nothing in the first query (the page a benchmark opens and grades
    in), and the second query is left ungraded by everyone (a queue always has work)."""
    rng = random.Random(seed)
    now = timezone.now()
    with transaction.atomic():
        project = Project.objects.create(name=f"Bench {slug}", slug=slug)
        owner, reviewer = _users(slug, ["owner", "reviewer"])
        team = _users(slug, [f"editor-{i:02d}" for i in range(editors)])
        Membership.objects.bulk_create(
            [Membership(project=project, user=owner, role=Role.OWNER)]
            + [Membership(project=project, user=reviewer, role=Role.REVIEWER)]
            + [Membership(project=project, user=u, role=Role.EDITOR) for u in team]
        )
        criteria = CriteriaVersion.objects.create(
            project=project,
            number=1,
            level_3="Answers the question completely.",
            level_2="Answers most of it.",
            level_1="Related, no answer.",
            level_0="Unrelated.",
            change=CriteriaChange.INITIAL,
            created_by=owner,
        )
        grading_set = GradingSet.objects.create(
            project=project, name="Main", required_grades=2, created_by=owner
        )

        n_docs = max(pairs_per_query * 4, queries * pairs_per_query // 25)
        doc_ids, version_ids = _next_ids(Document), _next_ids(DocumentVersion)
        docs: list[int] = []
        versions: list[int] = []
        texts: dict[int, tuple[str, str]] = {}

        def documents() -> Iterator[dict[str, Any]]:
            for i in range(n_docs):
                title, body = f"帮助文章 {i}", f"报名提交后，请在“我的报名”中修改联系电话。文档 {i}。"
                pk = next(doc_ids)
                docs.append(pk)
                texts[pk] = (title, body)
                yield {
                    "id": pk,
                    "project_id": project.pk,
                    "external_id": f"help-center/articles/{slug}/{i:07d}-how-to-change-your-registration",
                    "title": title,
                    "body": body,
                    "content_hash": content_hash(title, body, ""),
                }

        def document_versions() -> Iterator[dict[str, Any]]:
            for pk in docs:
                vid = next(version_ids)
                versions.append(vid)
                title, body = texts[pk]
                yield {
                    "id": vid,
                    "document_id": pk,
                    "version": 1,
                    "title": title,
                    "body": body,
                    "content_hash": content_hash(title, body, ""),
                }

        _Writer(Document, now).write(documents())
        _Writer(DocumentVersion, now).write(document_versions())
        version_of = dict(zip(docs, versions, strict=True))
        progress(f"{n_docs:,} documents")

        query_ids = _next_ids(Query)
        query_pks: list[int] = []

        def query_rows() -> Iterator[dict[str, Any]]:
            for q in range(queries):
                pk = next(query_ids)
                query_pks.append(pk)
                yield {
                    "id": pk,
                    "project_id": project.pk,
                    "external_id": f"{slug}-query-{q:06d}",
                    "text": f"如何修改报名信息 {q}",
                    "information_need": "修改联系电话的步骤和截止时间。",
                }

        _Writer(Query, now).write(query_rows())

        candidate_ids, grade_ids, history_ids = (
            _next_ids(Candidate),
            _next_ids(Grade),
            _next_ids(GradeHistory),
        )
        dispute_ids, final_ids = _next_ids(Dispute), _next_ids(FinalGrade)
        grades: list[dict[str, Any]] = []
        finals: list[dict[str, Any]] = []
        disputes: list[dict[str, Any]] = []
        statements: list[dict[str, Any]] = []
        first_editor = team[0].pk

        def candidates() -> Iterator[dict[str, Any]]:
            for q, query in enumerate(query_pks):
                start = rng.randrange(n_docs)
                for k in range(pairs_per_query):
                    pk = next(candidate_ids)
                    document = docs[(start + k) % n_docs]
                    yield {
                        "id": pk,
                        "grading_set_id": grading_set.pk,
                        "query_id": query,
                        "document_id": document,
                        "source": "imported",
                        "source_detail": "bench.trec",
                        "added_by_id": owner.pk,
                    }
                    _grade_pair(pk, document, q)

        def _grade_pair(pair: int, document: int, q: int) -> None:
            roll = rng.random()
            n = 0 if q == 1 or roll < 0.055 else 1 if roll < 0.085 else 3 if roll < 0.095 else 2
            pool = [u.pk for u in team if not (q == 0 and u.pk == first_editor)]
            who = rng.sample(pool, n)
            first = _pick_grade(rng)
            values = [first if rng.random() < 0.8 else _pick_grade(rng) for _ in who]
            at = now - timedelta(minutes=rng.randrange(60 * 24 * 90))
            for editor, value in zip(who, values, strict=True):
                grades.append(
                    {
                        "id": next(grade_ids),
                        "candidate_id": pair,
                        "editor_id": editor,
                        "grade": value,
                        "reason": "" if rng.random() < 0.7 else "缺少截止时间",
                        "criteria_version_id": criteria.pk,
                        "document_version_id": version_of[document],
                        "created_at": at,
                        "updated_at": at,
                    }
                )
            if n < 2:
                return
            if len(set(values)) == 1:
                finals.append(_final(pair, values[0], FinalSource.UNANIMOUS, None, at))
                return
            status = rng.choices(
                [
                    DisputeStatus.SETTLED,
                    DisputeStatus.IN_REVIEW,
                    DisputeStatus.REVEALED,
                    DisputeStatus.AWAITING_REASONS,
                ],
                weights=(60, 20, 10, 10),
            )[0]
            dispute = next(dispute_ids)
            disputes.append(
                {
                    "id": dispute,
                    "candidate_id": pair,
                    "grading_set_id": grading_set.pk,
                    "status": status,
                    "severity": max(values) - min(values),
                    "opened_at": at,
                    "revealed_at": at if status != DisputeStatus.AWAITING_REASONS else None,
                    "escalated_at": at
                    if status in (DisputeStatus.IN_REVIEW, DisputeStatus.SETTLED)
                    else None,
                    "settled_at": at if status == DisputeStatus.SETTLED else None,
                }
            )
            for editor, value in zip(who, values, strict=True):
                statements.append(
                    {
                        "dispute_id": dispute,
                        "editor_id": editor,
                        "original_grade": value,
                        "reason": "缺少截止时间" if status != DisputeStatus.AWAITING_REASONS else "",
                        "reason_given_at": at if status != DisputeStatus.AWAITING_REASONS else None,
                        "revised_at": at
                        if status in (DisputeStatus.IN_REVIEW, DisputeStatus.SETTLED)
                        else None,
                    }
                )
            if status == DisputeStatus.SETTLED:
                finals.append(
                    _final(pair, round(sum(values) / len(values)), FinalSource.ADJUDICATED, reviewer.pk, at)
                )

        def _final(pair: int, value: int, source: str, by: int | None, at: datetime) -> dict[str, Any]:
            return {
                "id": next(final_ids),
                "candidate_id": pair,
                "grade": value,
                "source": source,
                "decided_by_id": by,
                "criteria_version_id": criteria.pk,
                "decided_at": at,
            }

        counters.drop(connection)
        counts = {"documents": n_docs, "queries": queries}
        counts["pairs"] = _Writer(Candidate, now).write(candidates())
        progress(f"{counts['pairs']:,} pairs")
        counts["grades"] = _Writer(Grade, now).write(grades)
        progress(f"{counts['grades']:,} grades")
        counts["history"] = _Writer(GradeHistory, now).write(
            {
                "id": next(history_ids),
                "grade_id": g["id"],
                "candidate_id": g["candidate_id"],
                "editor_id": g["editor_id"],
                "changed_by_id": g["editor_id"],
                "kind": GradeHistory.Kind.CREATED,
                "new_grade": g["grade"],
                "new_reason": g["reason"],
                "created_at": g["created_at"],
            }
            for g in grades
        )
        counts["final grades"] = _Writer(FinalGrade, now).write(finals)
        counts["disputes"] = _Writer(Dispute, now).write(disputes)
        statement_ids = _next_ids(DisputeStatement)
        counts["statements"] = _Writer(DisputeStatement, now).write(
            {"id": next(statement_ids), **s} for s in statements
        )
        progress(", ".join(f"{v:,} {k}" for k, v in counts.items()))
        _reset_sequences()
        counters.install(connection)
        counters.recount(connection)
    _analyze()
    return Seeded(project, grading_set, owner, reviewer, team, query_pks, counts)


SEEDED_MODELS: list[type[models.Model]] = [
    Document,
    DocumentVersion,
    Query,
    Candidate,
    Grade,
    GradeHistory,
    FinalGrade,
    Dispute,
    DisputeStatement,
]


def _reset_sequences() -> None:
    statements = connection.ops.sequence_reset_sql(no_style(), SEEDED_MODELS)
    if statements:
        with connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)


def _analyze() -> None:
    """Fresh planner statistics, and on PostgreSQL the dead row versions of the recount cleared
    (VACUUM, which cannot run inside a transaction, such as a test's), as autovacuum would."""
    with connection.cursor() as cursor:
        vacuum = connection.vendor == "postgresql" and not connection.in_atomic_block
        cursor.execute("VACUUM ANALYZE" if vacuum else "ANALYZE")
