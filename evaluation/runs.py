"""Runs: uploads parsed, checked and stored; pools loaded for scoring after their hash is verified."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator

from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import Q, RestrictedError
from django.utils.translation import gettext as _

from annotator.models import PoolVersion, Project
from annotator.pools.models import parse_canonical
from annotator.web.errors import describe_error, located
from annotator.web.uploads import UploadTextError, upload_name, upload_text
from evaluation import formats, metrics
from evaluation.formats.ids import first_bad_id_char
from evaluation.formats.lists import parse_ranked_lists
from evaluation.formats.registry import FORMATS, names
from evaluation.models import PASTED_FILE_NAME, Comparison, Run, RunQuery

MAX_ID_LENGTH = 255  # PoolJudgment.query_id / doc_id


class RunUploadError(Exception):
    """A run file (or pasted text) that cannot be used; the message names the line and value."""


def _decode(data: bytes, source: str) -> str:
    try:
        return upload_text(data)
    except UploadTextError as error:
        raise RunUploadError(located(error.message, file=source, line=error.line)) from None


def run_parse(*, data: bytes, fmt: str, file_name: str, name: str = "") -> metrics.Run:
    """Read an uploaded run with the engine's readers (or the pasted-lists parser), all or nothing.
    `name`: the run's name in messages (the name given on the form; default the file's name)."""
    text = _decode(data, file_name)
    name = name or file_name
    try:
        if fmt == "lists":
            # Parsed from the text, not through formats.read_run: an empty paste is said as such below.
            run = parse_ranked_lists(text, source=file_name, name=name)
        elif fmt in names("run"):
            # The bytes are now known to be good text; the readers decode them again as they go.
            # A StringIO of the text would hold it at 4 bytes a character (85 MB for a 21 MB
            # file, measured), most of an upload's peak memory.
            del text
            buffer = io.BytesIO(data)  # shares `data`: nothing is copied
            buffer.name = file_name  # the readers name the file in their errors
            stream = io.TextIOWrapper(buffer, encoding="utf-8-sig", newline=FORMATS[fmt].newline)
            run = formats.read_run(stream, format=str(fmt), name=name)
        else:
            raise RunUploadError(
                _("Unknown run format %(format)s; allowed: %(allowed)s")
                % {"format": fmt, "allowed": ", ".join(names("run"))}
            )
    except metrics.EvaluationError as error:
        raise RunUploadError(describe_error(error)) from None
    if not run.rows:
        # Queries with empty lists only ("q1:") too: the comparison's export writes the run as a
        # TREC file, which cannot hold them, and `evaluate` refuses it as empty.
        if fmt == "lists" and file_name == PASTED_FILE_NAME:
            raise RunUploadError(
                _(
                    "The pasted text contains no rankings: each line needs a query ID, a colon and document "
                    "IDs."
                )
            )
        raise RunUploadError(_("%(file)s contains no rankings.") % {"file": file_name})
    _refuse_unstorable_ids(run, file_name)
    return run


def _refuse_unstorable_ids(run: metrics.Run, source: str) -> None:
    # A frozen pool cannot hold IDs with tabs or line breaks (its canonical form is line-based),
    # so such an ID could never be judged; it would also break the stored columns. The file
    # readers refuse them already; pasted lists come through here only.
    for query in run.query_ids:
        ranking = run.ranking(query)
        lines = run.lines_of(query)
        if len(query) > MAX_ID_LENGTH:
            problem = _("query ID %(value)s is longer than %(max)s characters, which no pool can hold") % {
                "value": repr(query[:40] + "…"),
                "max": MAX_ID_LENGTH,
            }
            raise RunUploadError(located(problem, file=source, line=lines[0] if lines else None))
        for position, value in enumerate((query, *ranking)):
            if char := first_bad_id_char(value):
                # A query ID is on the line of its first document (a run lists no empty query).
                line = lines[max(position - 1, 0)] if lines else None
                what = _("query ID") if position == 0 else _("document ID")
                raise RunUploadError(
                    located(
                        _(
                            "%(what)s %(value)s contains the character %(char)s; IDs cannot hold control "
                            "characters, tabs, line breaks, invisible characters (zero-width spaces, "
                            "direction marks) or a byte-order mark"
                        )
                        % {"char": char, "what": what, "value": repr(value)},
                        file=source,
                        line=line,
                    )
                )


@transaction.atomic
def run_upload(
    *,
    project: Project,
    name: str,
    notes: str,
    fmt: str,
    file_name: str,
    data: bytes,
    by: User,
    check: tuple[PoolVersion, metrics.Settings] | None = None,
) -> Run:
    """Parse, optionally check against a pool version under the given policies, and store.

    The bytes are stored exactly as received, with their SHA-256; nothing is stored when any
    step fails (RunUploadError names the file, line and value). What the reader accepted with a
    warning is in the returned run's `upload_warnings`, in the UI language.
    """
    if Run.objects.filter(project=project, name=name).exists():
        raise RunUploadError(
            _("A run named “%(name)s” already exists in this project; choose another name.") % {"name": name}
        )
    file_name = upload_name(file_name)
    parsed = run_parse(data=data, fmt=fmt, file_name=file_name, name=name)
    if check is not None:
        pool_version, settings = check
        try:
            run_check(run=parsed, pool_version=pool_version, settings=settings)
        except metrics.EvaluationError as error:
            # Which version refused it: the check's default is a choice the uploader may not have made.
            raise RunUploadError(
                _("Checked against %(version)s: %(problem)s")
                % {"version": pool_version, "problem": describe_error(error)}
            ) from None
    try:
        with transaction.atomic():
            run = Run.objects.create(
                project=project,
                name=name,
                notes=notes,
                format=fmt,
                file_name=file_name,
                raw=b"" if _binds_as_text() else data,
                sha256=hashlib.sha256(data).hexdigest(),
                size=len(data),
                uploaded_by=by,
                has_scores=parsed.has_scores,
                query_count=len(parsed.query_ids),
                entry_count=parsed.rows,
            )
            if _binds_as_text():
                _store_raw(run, data)
            for batch in _row_batches(Run.rows_of(parsed)):
                for row in batch:
                    row.run = run
                RunQuery.objects.bulk_create(batch)
            run.upload_warnings = tuple(describe_error(warning) for warning in parsed.warnings)
            return run
    except IntegrityError:
        raise RunUploadError(
            _("A run named “%(name)s” already exists in this project; choose another name.") % {"name": name}
        ) from None


def _binds_as_text() -> bool:
    """Whether the database's statements carry their parameters as text: psycopg's client-side
    binding (Django's default on PostgreSQL) writes bytes into the statement as hex, a copy of
    a run's bytes over twice their size (SQLite binds them as they are)."""
    return connection.vendor == "postgresql" and not connection.settings_dict["OPTIONS"].get(
        "server_side_binding"
    )


def _store_raw(run: Run, data: bytes) -> None:
    """The run's bytes, written in the transaction that creates its row, through a cursor that
    binds them on the server in binary (%b): sent as they are, not as hex text."""
    import psycopg  # only on PostgreSQL

    connection.ensure_connection()
    table = connection.ops.quote_name(Run._meta.db_table)
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(f"UPDATE {table} SET raw = %b WHERE id = %s", [data, run.pk])  # noqa: S608 - the model's own table
    run.raw = data


# A batch of RunQuery rows holds each query's ranking as text: batched by the documents they
# hold, not by queries alone, so a deep run's batch stays a small part of its upload's memory.
BATCH_QUERIES = 2000
BATCH_DOCUMENTS = 2_000


def _row_batches(rows: Iterator[RunQuery]) -> Iterator[list[RunQuery]]:
    batch: list[RunQuery] = []
    documents = 0
    for row in rows:
        batch.append(row)
        documents += row.size
        if len(batch) >= BATCH_QUERIES or documents >= BATCH_DOCUMENTS:
            yield batch
            batch, documents = [], 0
    if batch:
        yield batch


class RunDeleteError(Exception):
    """A run that cannot be deleted; the message names the comparisons that use it."""


def _run_in_use(run: Run, comparisons: list[str]) -> RunDeleteError:
    return RunDeleteError(
        _("Run “%(name)s” cannot be deleted because these comparisons use it: %(comparisons)s.")
        % {"name": run.name, "comparisons": ", ".join(f"“{name}”" for name in comparisons)}
    )


def run_delete(*, run: Run) -> None:
    """Delete a run that no comparison uses, with its parsed ranking (RunQuery rows cascade).

    A comparison's numbers must stay reproducible from its stored runs, so a used run is refused
    (RunDeleteError naming the comparisons) and nothing changes.
    """
    with transaction.atomic():
        # Lock the run row first. On PostgreSQL a comparison being created takes a key-share lock
        # on it (its foreign-key check), which FOR UPDATE conflicts with: a comparison either
        # committed before this lock, and the check below sees it, or waits for this transaction
        # and then fails its foreign-key check on the deleted row. SQLite (IMMEDIATE transactions)
        # serialises writers anyway.
        list(Run.objects.select_for_update().filter(pk=run.pk).values_list("pk", flat=True))
        used_by = list(
            Comparison.objects.filter(Q(run_a=run) | Q(run_b=run))
            .order_by("created_at", "pk")
            .values_list("name", flat=True)
        )
        if used_by:
            raise _run_in_use(run, used_by)
        try:
            run.delete()
        except RestrictedError as error:
            # The final guard, Comparison.run_a/run_b's on_delete=RESTRICT: Django re-reads the
            # comparisons using the run just before deleting, and raises before deleting anything.
            raise _run_in_use(run, sorted(str(c) for c in error.restricted_objects)) from None


def run_check(
    *, run: metrics.Run, pool_version: PoolVersion, settings: metrics.Settings
) -> metrics.RunResult:
    """Score `run` against the pool version under `settings`; EvaluationError names what fails."""
    return metrics.evaluate_run(pool_for_scoring(pool_version), run, settings, name=run.name)


def verify_pool(version: PoolVersion) -> None:
    """`version.verify()` (PoolIntegrityError on a mismatch), once per loaded instance.

    A page may need the check twice (its numbers, then the breakdown); the text of a row already
    in memory does not change, so hashing it once per load is enough.
    """
    marker = (version.sha256, len(version.canonical))
    if getattr(version, "_verified_as", None) != marker:
        version.verify()
        version._verified_as = marker  # type: ignore[attr-defined]


def pool_for_scoring(version: PoolVersion) -> metrics.Pool:
    """The pool version's judgments as the engine's Pool, after checking its SHA-256.

    Raises PoolIntegrityError (never a score) when the stored judgments no longer match the hash.
    The canonical text only holds valid judgments (its writer refuses anything else) and its hash
    has just been checked, so the engine gets it as trusted instead of re-validating every grade.
    """
    verify_pool(version)
    return trusted_pool(version, parse_canonical(version.canonical))


def trusted_pool(version: PoolVersion, judgments: dict[str, dict[str, int]]) -> metrics.Pool:
    return metrics.Pool._trusted(judgments, f"{version.pool.name} v{version.number}")


def pool_query_grades(version: PoolVersion, query_id: str) -> dict[str, int] | None:
    """One query's judgments {doc_id: grade} after checking the whole version's SHA-256.

    Only the query's block of the canonical text is parsed (it is sorted by query), which keeps
    the per-query breakdown fast on a pool of a million judgments. None: not in the pool.
    """
    verify_pool(version)
    canonical = version.canonical
    prefix = f"{query_id}\t"
    start = 0 if canonical.startswith(prefix) else canonical.find("\n" + prefix)
    if start < 0:
        return None
    if start > 0:
        start += 1
    grades: dict[str, int] = {}
    while start < len(canonical) and canonical.startswith(prefix, start):
        end = canonical.index("\n", start)
        _query, doc, grade = canonical[start:end].split("\t")
        grades[doc] = int(grade)
        start = end + 1
    return grades
