"""Writing frozen pool versions: the only way a PoolVersion and its judgments come to exist.

`pool_freeze` (a set's final grades, in freeze.py) and `pool_import` (a file, in files.py) both
write through `pool_version_create`; `grading_set_create_from_version` opens a set that extends a
version.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext as _

from annotator.models import (
    PERMISSIONS,
    Candidate,
    CandidateSource,
    CriteriaChange,
    CriteriaVersion,
    Document,
    FinalGrade,
    FinalSource,
    GradingSet,
    Membership,
    Permission,
    Pool,
    PoolJudgment,
    PoolVersion,
    Project,
    Query,
    StaleReason,
)
from annotator.pools.models import PoolIntegrityError, canonical_serialisation, sha256_hex


class FreezeError(Exception):
    """Freezing was refused; the message says why in words a reviewer can act on. Raised here
    too: a set that continues a version may not freeze once a newer version exists."""


class PoolImportError(Exception):
    """The file cannot become a pool version; the message names the line, value and rule. Raised
    here too: an import that changes nothing is refused under the version lock."""


@transaction.atomic
def pool_version_create(
    *,
    pool: Pool,
    judgments: Iterable[tuple[str, str, int, str]],
    source: str,
    by: User,
    grading_set: GradingSet | None = None,
    criteria_versions: list[int] | None = None,
    provenance: Mapping[str, Any] | None = None,
    exclusions: list[dict[str, Any]] | None = None,
    file_name: str = "",
    file_sha256: str = "",
    document_versions: Mapping[tuple[str, str], int] | None = None,
    query_fingerprints: Mapping[tuple[str, str], str] | None = None,
    continues: PoolVersion | None = None,
    refuse_unchanged: bool = False,
    on_rows: Callable[[int], None] | None = None,
) -> PoolVersion:
    """Write version N+1 of `pool` from (query_id, doc_id, grade, source) rows.

    Computes the canonical serialisation, its SHA-256 and the counts; raises ValueError (naming
    the pair) for a duplicate pair, a grade outside 0..3, or an ID the serialisation cannot hold.
    `continues`: the version the rows were started from, which must still be the newest (else
    FreezeError): versions form a line, and N+1 built on N-1 would silently drop N's changes.
    `refuse_unchanged`: PoolImportError when the rows are exactly the newest version's (an import
    sent twice, a double click: versions are permanent, so a copy would stay for good).
    `on_rows(n)`: told how many judgments are written so far, every ROWS_REPORTED (a job's progress).
    """
    # Held as columns, not a tuple a row: the rows are read four times (the text, the counts, the
    # judgments' rows) and a tuple each cost more than the row's line in a file.
    queries: list[str] = []
    docs: list[str] = []
    grade_of: list[int] = []
    sources: list[str] = []
    for q, d, g, s in judgments:
        queries.append(q)
        docs.append(d)
        grade_of.append(g)
        sources.append(s)
    canonical = canonical_serialisation(zip(queries, docs, grade_of, strict=True))
    # Lock the pool row so two writers cannot both take number N+1 (the unique constraint is the
    # backstop; the lock makes the second writer wait and then take N+2).
    Pool.objects.select_for_update().filter(pk=pool.pk).first()
    latest = pool.latest_version()
    if continues is not None and (refusal := newer_version_refusal(pool, continues, latest)):
        raise FreezeError(refusal)
    # Checked under the lock above: of two identical imports sent at once, the second sees the first.
    if refuse_unchanged and latest is not None and latest.sha256 == sha256_hex(canonical):
        raise PoolImportError(
            _(
                "These judgments are exactly those of %(pool)s version %(number)d (SHA-256 %(hash)s…): "
                "nothing was imported."
            )
            % {"pool": pool.name, "number": latest.number, "hash": latest.sha256[:12]}
        )
    grades = Counter(grade_of)
    version = PoolVersion.objects.create(
        pool=pool,
        number=(latest.number if latest else 0) + 1,
        source=source,
        grading_set=grading_set,
        canonical=canonical,
        sha256=sha256_hex(canonical),
        criteria_versions=criteria_versions or [],
        provenance=dict(provenance or {}),
        exclusions=exclusions or [],
        counts={
            "judgments": len(queries),
            "queries": len(set(queries)),
            "by_grade": {str(g): grades.get(g, 0) for g in (0, 1, 2, 3)},
        },
        file_name=file_name,
        file_sha256=file_sha256,
        frozen_by=by,
    )
    dv, fp = document_versions or {}, query_fingerprints or {}
    _insert_judgments(
        version.pk,
        (
            (q, d, g, src, dv.get((q, d)), fp.get((q, d), ""))
            for q, d, g, src in zip(queries, docs, grade_of, sources, strict=True)
        ),
        on_rows,
    )
    return version


JUDGMENT_COLUMNS = (
    "version_id",
    "query_id",
    "doc_id",
    "grade",
    "source",
    "document_version_id",
    "query_fingerprint",
)


ROWS_REPORTED = 20_000


def _insert_judgments(
    version_id: int,
    rows: Iterable[tuple[str, str, int, str, int | None, str]],
    on_rows: Callable[[int], None] | None = None,
) -> None:
    """Write a version's judgments without a model instance per row (a million of them took most of
    a freeze): COPY on PostgreSQL, batched INSERTs on SQLite. The table's constraints still check
    every row (one pair once, grades 0..3)."""
    table = connection.ops.quote_name(PoolJudgment._meta.db_table)
    columns = ", ".join(connection.ops.quote_name(c) for c in JUDGMENT_COLUMNS)
    written = 0
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One COPY per batch: the report runs between them, since a connection in COPY takes no
            # other statement (inline, the job's progress goes through this same connection).
            for batch in itertools.batched(rows, ROWS_REPORTED):
                with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                    for q, d, g, s, dv, fp in batch:
                        copy.write_row((version_id, q, d, g, s, dv, fp))
                written += len(batch)
                if on_rows is not None:
                    on_rows(written)
            return
        sql = f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(JUDGMENT_COLUMNS))})"
        for batch in itertools.batched(rows, 5000):
            cursor.executemany(sql, [(version_id, *row) for row in batch])
            written += len(batch)
            if on_rows is not None and written % ROWS_REPORTED < 5000:
                on_rows(written)


def newer_version_refusal(pool: Pool, continues: PoolVersion, latest: PoolVersion | None) -> str:
    """Why rows started from `continues` cannot become the next version of `pool` when `latest`
    is its newest version now, or "". Said by the freeze page before it is sent and by the writer."""
    if latest is None or latest.pk == continues.pk:
        return ""
    return _(
        "This set started from version %(v)d of %(pool)s, but version %(latest)d has been added since "
        "(frozen or imported): freezing it would drop the changes of version %(latest)d. Start a new set "
        "from version %(latest)d and add this set's changes there."
    ) % {"v": continues.number, "pool": pool.name, "latest": latest.number}


def require_permission(project: Project, user: User, permission: Permission) -> None:
    """Services check the permission too, so a shell or another view cannot skip the rule."""
    membership = Membership.objects.filter(project=project, user=user, user__is_active=True).first()
    if membership is None or not membership.may(permission):
        raise PermissionDenied(
            _("This needs the %(role)s role in project %(project)s.")
            % {"role": PERMISSIONS[permission].label, "project": project}
        )


# ---- A new version from a frozen one --------------------------------------------------------------


class CopyError(Exception):
    """A frozen version cannot be copied into a grading set (e.g. its IDs are not in the project)."""


def _unique_set_name(project: Project, wanted: str) -> str:
    name, n = wanted[:190], 1
    while GradingSet.objects.filter(project=project, name=name).exists():
        n += 1
        name = f"{wanted[:190]} ({n})"
    return name


def continue_refusal(version: PoolVersion) -> str:
    """Why `version` cannot be continued now, or "": versions form a line (see pool_version_create),
    so only the newest can be continued, by one open set at a time."""
    latest = version.pool.latest_version()
    if latest is not None and latest.pk != version.pk:
        return _(
            "Version %(v)d is not the newest version of %(pool)s: start from version %(latest)d, so that its "
            "changes are kept."
        ) % {"v": version.number, "pool": version.pool.name, "latest": latest.number}
    started = (
        GradingSet.objects.filter(based_on=version)
        .exclude(Exists(PoolVersion.objects.filter(grading_set=OuterRef("pk"))))
        .first()
    )
    if started is not None:
        return _(
            "Grading set “%(set)s” already continues %(pool)s from version %(v)d: add to it, or freeze it "
            "first."
        ) % {"set": started.name, "pool": version.pool.name, "v": version.number}
    return ""


@transaction.atomic
def grading_set_create_from_version(*, version: PoolVersion, by: User, name: str = "") -> GradingSet:
    """Copy frozen `version` into a new open grading set of the same pool (reviewer+).

    Every pair becomes a candidate (source `copied`) with its final grade copied (source kept), so
    nothing is regraded; add queries and documents, grade them, then freeze the set as N+1.
    """
    project = version.pool.project
    require_permission(project, by, Permission.CONTINUE_POOL)
    problems = version.integrity_problems()
    if problems:
        raise PoolIntegrityError(" ".join(problems))
    if refusal := continue_refusal(version):
        raise CopyError(refusal)
    rows = list(
        version.judgments.select_related("document_version")
        .defer(
            "document_version__title", "document_version__body", "document_version__url"
        )  # its number only
        .order_by("query_id", "doc_id")
    )
    # Subqueries, not ID lists (SQLite refuses 32,767 IDs); of a document only what the copy
    # compares, not its body.
    in_version = version.judgments.order_by()
    queries = {
        q.external_id: q
        for q in Query.objects.filter(project=project, external_id__in=in_version.values("query_id")).only(
            "pk", "external_id", "text", "information_need"
        )
    }
    documents = {
        d.external_id: d
        for d in Document.objects.filter(project=project, external_id__in=in_version.values("doc_id")).only(
            "pk", "external_id", "version"
        )
    }
    missing_q = sorted({r.query_id for r in rows} - queries.keys())
    missing_d = sorted({r.doc_id for r in rows} - documents.keys())
    if missing_q or missing_d:
        parts = []
        if missing_q:
            parts.append(
                _("queries %(ids)s")
                % {"ids": ", ".join(missing_q[:10]) + (" …" if len(missing_q) > 10 else "")}
            )
        if missing_d:
            parts.append(
                _("documents %(ids)s")
                % {"ids": ", ".join(missing_d[:10]) + (" …" if len(missing_d) > 10 else "")}
            )
        raise CopyError(
            _("This version refers to %(missing)s that this project does not have: import them first.")
            % {"missing": _(" and ").join(parts)}
        )
    based_grading_set = version.grading_set
    grading_set = GradingSet.objects.create(
        project=project,
        name=_unique_set_name(project, name.strip() or f"{version.pool.name} v{version.number + 1}"),
        # No description written here: the set page says where it started (based_on) in its
        # reader's language; a stored sentence would stay in the language of whoever clicked.
        required_grades=based_grading_set.required_grades if based_grading_set else 2,
        pool=version.pool,
        based_on=version,
        created_by=by,
    )
    label = f"{version.pool.name} v{version.number}"
    candidates = Candidate.objects.bulk_create(
        [
            Candidate(
                grading_set=grading_set,
                query=queries[r.query_id],
                document=documents[r.doc_id],
                source=CandidateSource.COPIED,
                source_detail=label,
                added_by=by,
            )
            for r in rows
        ]
    )
    numbers = version.criteria_versions or []
    criteria = (
        CriteriaVersion.objects.filter(project=project, number=max(numbers)).first() if numbers else None
    ) or CriteriaVersion.objects.current_for(project)
    # Who settled each pair and their note come along (the final grade keeps its provenance).
    # No sentence is stored: the timeline says "copied from" in its reader's language, from the
    # candidate's source and the version's own record.
    originals = (
        {
            (f.candidate.query.external_id, f.candidate.document.external_id): f
            for f in FinalGrade.objects.filter(candidate__grading_set=based_grading_set).select_related(
                "candidate__query", "candidate__document"
            )
        }
        if based_grading_set is not None
        else {}
    )
    # What changed since the version was frozen, or since its grades were decided, marks a copy for
    # a reviewer's re-check, as it marked the grades of open sets, so grades made under replaced
    # criteria are not frozen again without a word. Imported judgments claim no criteria (they take
    # the current ones here); a query is compared by the fingerprint its judgment recorded (none:
    # not known, nothing to compare).
    newest_meaning = (
        CriteriaVersion.objects.filter(project=project, change=CriteriaChange.MEANING)
        .order_by("-number")
        .values_list("number", flat=True)
        .first()
    ) or 0
    finals = []
    for r, c in zip(rows, candidates, strict=True):
        original = originals.get((r.query_id, r.doc_id))
        if r.source in FinalSource.values:
            final = FinalGrade(
                candidate=c,
                grade=r.grade,
                source=r.source,
                criteria_version=criteria,
                decided_by=original.decided_by if original else None,
                note=original.note if original else "",
            )
        else:
            # FinalGrade has no "imported" source: the person starting the version takes the
            # imported grade on as a decision; the next freeze restores "imported".
            final = FinalGrade(
                candidate=c,
                grade=r.grade,
                source=FinalSource.ADJUDICATED,
                decided_by=by,
                criteria_version=criteria,
            )
        reasons = []
        if r.document_version is not None and r.document_version.version < documents[r.doc_id].version:
            reasons.append(StaleReason.DOCUMENT.value)
        if r.query_changed_since(queries[r.query_id].fingerprint):
            reasons.append(StaleReason.QUERY.value)
        if criteria.number < newest_meaning:
            reasons.append(StaleReason.CRITERIA.value)
        final.stale_reason = ",".join(reasons)
        finals.append(final)
    FinalGrade.objects.bulk_create(finals)
    return grading_set
