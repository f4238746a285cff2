"""Runs and comparisons: uploads, the engine calls behind every number, and the export.

Every number a comparison page shows comes from `evaluation.metrics` (the scoring engine): the
batch results are computed once, when the comparison is created, and stored with it; the
per-position breakdown of one query is `metrics.score_query` on demand. Nothing here or in the
views recomputes a DCG term.

Public entry points (keyword-only, as the house style asks):

- `run_parse(data=, fmt=, file_name=)` -> `metrics.Run`, or `RunUploadError` naming the line.
- `run_upload(project=, name=, notes=, fmt=, file_name=, data=, by=, check=)` -> `Run`.
- `run_check(run=, pool_version=, settings=)` -> `metrics.RunResult` (validation against a pool).
- `run_delete(run=)`: an unused run goes; `RunDeleteError` names the comparisons using it.
- `comparison_create(project=, pool_version=, run_a=, run_b=, settings=, by=, name=, notes=)`.
- `comparison_breakdown(comparison=, query_id=, k=, gain=)` -> `Breakdown` (A and B side by side).
- `comparison_recompute(comparison=)` -> differences from the stored results ([] = identical).
- `comparison_export(comparison=)` -> (file name, zip bytes).
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import math
import re
import zipfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC
from pathlib import PurePosixPath
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Q, RestrictedError
from django.utils.text import Truncator
from django.utils.translation import gettext as _

from annotator.models import PoolVersion, Project
from annotator.pools.models import PoolIntegrityError, parse_canonical
from annotator.web.errors import describe_error, located
from annotator.web.uploads import UploadTextError, upload_text
from evaluation import formats, metrics
from evaluation.formats.common import first_bad_id_char, text_lines
from evaluation.metrics.policies import gettext_noop
from evaluation.models import PASTED_FILE_NAME, Comparison, Run, RunFormat, RunQuery

__all__ = [
    "Breakdown",
    "ComparisonInputError",
    "ComparisonResults",
    "PoolIntegrityError",
    "RunDeleteError",
    "RunUploadError",
    "comparison_breakdown",
    "comparison_create",
    "comparison_export",
    "comparison_recompute",
    "describe_error",
    "detect_run_format",
    "parse_ranked_lists",
    "pool_for_scoring",
    "pool_query_grades",
    "run_check",
    "run_delete",
    "run_parse",
    "run_upload",
    "verify_pool",
]

RESULTS_VERSION = 1
MAX_ID_LENGTH = 255  # PoolJudgment.query_id / doc_id


# ---- Errors -------------------------------------------------------------------------------------


class RunUploadError(Exception):
    """A run file (or pasted text) that cannot be used; the message names the line and value."""


class ComparisonInputError(Exception):
    """A comparison refused at creation; `field` says which form field the problem belongs to.

    `problems` holds every (field, message) found: both runs are checked, so that a user who
    fixes run A is not told about run B only on the next try.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        self.problems: list[tuple[str | None, str]] = [(field, message)]
        super().__init__(message)
        self.field = field

    @classmethod
    def of(cls, problems: list[tuple[str | None, str]]) -> ComparisonInputError:
        error = cls(problems[0][1], field=problems[0][0])
        error.problems = problems
        return error

    def __str__(self) -> str:
        return " ".join(message for _field, message in self.problems)


# ---- Runs: parsing uploads ----------------------------------------------------------------------

# Query ID, a colon, then document IDs in rank order. Full-width punctuation is accepted because
# Chinese keyboards produce it by default, the enumeration comma 、 too: Chinese lists are written
# with it ("文档甲、文档乙"), and read as one ID it scored 0 without a word (QA).
_COMMA = re.compile(r"[,，、]")
# IDs in a pasted list are separated by any Unicode space (the full-width U+3000 too), but not by
# the characters no ID may hold, where str.split() also splits (NEL, U+2028, U+2029,
# U+001C-U+001F): an ID holding one is refused by name, not silently read as two IDs.
_ID_SPACE = re.compile(r"[^\S\x1c-\x1f\x85\u2028\u2029]+")
# The same spaces for stripping: str.strip() would also drop those characters at an ID's ends,
# storing "B" for "B<U+2028>" without a word (QA). Every Unicode space lies below U+3001.
_SPACES = "".join(c for c in map(chr, range(0x3001)) if _ID_SPACE.fullmatch(c))


def detect_run_format(file_name: str, explicit: str = "auto") -> str:
    """The chosen format, else by extension (.csv, .jsonl/.ndjson, .txt with colons = lists)."""
    if explicit and explicit != "auto":
        return explicit
    suffix = PurePosixPath(file_name).suffix.lower()
    if suffix == ".csv":
        return RunFormat.CSV
    if suffix in (".jsonl", ".ndjson"):
        return RunFormat.JSONL
    return RunFormat.TREC


def parse_ranked_lists(text: str, *, source: str, name: str) -> metrics.Run:
    """`qid: id1, id2, ...` per line -> a rank-only run; the list order is the ranking.

    Blank lines and lines starting with # are skipped. IDs are separated by commas and/or
    spaces. A query listed twice or a document listed twice for one query is refused. A query
    with no IDs ("q3:") is left out of the run: it is missing from it, as in any run file.
    """
    query_ids: list[str] = []
    docs: list[str] = []
    lines: list[int] = []
    offsets = [0]
    first_line: dict[str, int] = {}
    for number, raw_line in enumerate(text_lines(text), start=1):
        line = raw_line.strip(_SPACES)
        if not line or line.startswith("#"):
            continue
        # The query ends at the first ": " (so "http://x: a, b" names query "http://x"), else at the
        # first colon, half- or full-width ("q1:a,b", "问题一：甲，乙").
        head, colon, tail = line.partition(": ")
        if not colon:
            head, colon, tail = line.partition(":")
        if not colon:
            head, colon, tail = line.partition("：")
        if not colon:
            raise metrics.EvaluationError(
                gettext_noop("expected 'query_id: doc_id, doc_id, ...' but found no colon in %(line)r"),
                {"line": line[:80]},
                source=source,
                line=number,
            )
        query = head.strip(_SPACES)
        if not query:
            raise metrics.EvaluationError(
                gettext_noop("the query ID before the colon is empty"), source=source, line=number
            )
        if query in first_line:
            raise metrics.EvaluationError(
                gettext_noop(
                    "query %(query)r is listed twice (lines %(first)s and %(second)s); give each query one line"
                ),
                {"query": query, "first": first_line[query], "second": number},
                query=query,
                source=source,
                line=number,
            )
        first_line[query] = number
        # Commas separate entries (spaces too); an empty entry between two commas is most likely
        # a lost ID, so it is refused rather than closing the gap. One trailing comma is fine.
        entries = [piece.strip(_SPACES) for piece in _COMMA.split(tail.strip(_SPACES))]
        if entries and not entries[-1] and len(entries) > 1:
            entries.pop()
        if any(not entry for entry in entries) and tail.strip(_SPACES):
            raise metrics.EvaluationError(
                gettext_noop(
                    "query %(query)r: an empty entry between two commas (entry %(position)s); remove the extra comma or add the missing ID"
                ),
                {"query": query, "position": entries.index("") + 1},
                query=query,
                source=source,
                line=number,
            )
        ranking = [doc for entry in entries for doc in _ID_SPACE.split(entry) if doc]
        seen: dict[str, int] = {}
        for position, doc in enumerate(ranking, start=1):
            if doc in seen:
                raise metrics.EvaluationError(
                    gettext_noop(
                        "query %(query)r: document %(doc)r appears twice in the ranking (positions %(first)s and %(second)s)"
                    ),
                    {"query": query, "doc": doc, "first": seen[doc], "second": position},
                    query=query,
                    doc_id=doc,
                    source=source,
                    line=number,
                )
            seen[doc] = position
        if not ranking:
            # "q3:" with no IDs: the system returned nothing for q3. No run file format can say
            # that apart from leaving the query out (a TREC, CSV or JSONL run has lines per
            # document), so it counts as a query the run did not answer, as in the copy `evaluate`
            # reads from the comparison's export (QA: the export did not reproduce its counts).
            continue
        query_ids.append(query)
        docs.extend(ranking)
        lines.extend([number] * len(ranking))
        offsets.append(len(docs))
    return metrics.Run(
        query_ids,
        docs,
        np.asarray(offsets, dtype=np.int64),
        lines=np.asarray(lines, dtype=np.int64),
        name=name,
        source=source,
    )


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
        if fmt == RunFormat.LISTS:
            run = parse_ranked_lists(text, source=file_name, name=name)
        elif fmt in (RunFormat.TREC, RunFormat.CSV, RunFormat.JSONL):
            # The bytes are now known to be good text; the readers decode them again as they go.
            # A StringIO of the text would hold it at 4 bytes a character (85 MB for a 21 MB
            # file, measured), most of an upload's peak memory.
            del text
            buffer = io.BytesIO(data)  # shares `data`: nothing is copied
            buffer.name = file_name  # the readers name the file in their errors
            stream = io.TextIOWrapper(
                buffer, encoding="utf-8-sig", newline="" if fmt == RunFormat.CSV else None
            )
            run = formats.read_run(stream, format=str(fmt), name=name)
        else:
            raise RunUploadError(
                _("Unknown run format %(format)s; allowed: %(allowed)s")
                % {"format": fmt, "allowed": ", ".join(RunFormat.values)}
            )
    except metrics.EvaluationError as error:
        raise RunUploadError(describe_error(error)) from None
    if not run.rows:
        # Queries with empty lists only ("q1:") too: the comparison's export writes the run as a
        # TREC file, which cannot hold them, and `evaluate` refuses it as empty (QA report).
        if fmt == RunFormat.LISTS and file_name == PASTED_FILE_NAME:
            raise RunUploadError(
                _(
                    "The pasted text contains no rankings: each line needs a query ID, a colon and document IDs."
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
                            "characters, tabs, line breaks, invisible characters (zero-width spaces, direction "
                            "marks) or a byte-order mark"
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
                raw=data,
                sha256=hashlib.sha256(data).hexdigest(),
                size=len(data),
                uploaded_by=by,
                has_scores=parsed.has_scores,
                query_count=len(parsed.query_ids),
                entry_count=parsed.rows,
            )
            for batch in itertools.batched(Run.rows_of(parsed), 2000):
                for row in batch:
                    row.run = run
                RunQuery.objects.bulk_create(batch)
            run.upload_warnings = tuple(describe_error(warning) for warning in parsed.warnings)
            return run
    except IntegrityError:
        raise RunUploadError(
            _("A run named “%(name)s” already exists in this project; choose another name.") % {"name": name}
        ) from None


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


# ---- Pools: verified loading --------------------------------------------------------------------


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
    return _trusted_pool(version, parse_canonical(version.canonical))


def _trusted_pool(version: PoolVersion, judgments: dict[str, dict[str, int]]) -> metrics.Pool:
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


# ---- Comparisons: creation ----------------------------------------------------------------------


def _nan_to_none(values: np.ndarray) -> list[float | None]:
    return [None if math.isnan(v) else v for v in values.tolist()]


def _system_results(result: metrics.RunResult) -> dict[str, Any]:
    counts = result.counts
    return {
        "dcg": result.dcg.tolist(),
        "ndcg": _nan_to_none(result.ndcg),
        "missing": result.missing.tolist(),
        "unjudged": result.unjudged.tolist(),
        "retrieved": result.retrieved.tolist(),
        "mean": result.mean,
        "micro": result.micro,
        "counts": {
            "queries": counts.queries,
            "evaluated": counts.evaluated,
            "zero_idcg": counts.zero_idcg,
            "excluded": counts.excluded,
            "missing_from_run": counts.missing_from_run,
            "unjudged_in_top_k": counts.unjudged_in_top_k,
            "extra_queries_skipped": counts.extra_queries_skipped,
        },
        "extra_queries": list(result.extra_queries),
    }


def results_of(comparison: metrics.Comparison) -> dict[str, Any]:
    """The engine's comparison as the JSON stored on `Comparison.results` (full precision)."""
    a, b = comparison.a, comparison.b
    return {
        "version": RESULTS_VERSION,
        "query_ids": list(comparison.query_ids),
        # IDCG, zero-IDCG and exclusion depend on the pool only: the same for both systems.
        "idcg": a.idcg.tolist(),
        "zero_idcg": a.zero_idcg.tolist(),
        "excluded": a.excluded.tolist(),
        "a": _system_results(a),
        "b": _system_results(b),
        "delta": _nan_to_none(comparison.delta),
        "comparison": {
            "paired": comparison.paired,
            "mean_delta": comparison.mean_delta,
            "wins": comparison.wins,
            "ties": comparison.ties,
            "losses": comparison.losses,
            "randomization_p": comparison.randomization_p,
            "randomization_exact": comparison.randomization_exact,
            "n_permutations": comparison.n_permutations,
            "t_statistic": comparison.t_statistic,
            "t_test_p": comparison.t_test_p,
            "delta_ci95": list(comparison.delta_ci95) if comparison.delta_ci95 is not None else None,
            "n_resamples": comparison.n_resamples,
            "seed": comparison.seed,
        },
    }


def summary_of(results: Mapping[str, Any]) -> dict[str, Any]:
    """The few numbers list pages show, kept beside the (large) results."""
    c = results["comparison"]
    return {
        "queries": results["a"]["counts"]["queries"],
        "a_mean": results["a"]["mean"],
        "b_mean": results["b"]["mean"],
        "mean_delta": c["mean_delta"],
        "wins": c["wins"],
        "ties": c["ties"],
        "losses": c["losses"],
    }


def _compute(pool: metrics.Pool, run_a: Run, run_b: Run, settings: metrics.Settings) -> metrics.Comparison:
    """Evaluate A and B (each error says which run it is in; both are reported) and compare them."""
    results = []
    problems: list[tuple[str | None, str]] = []
    # Both runs' parsed rankings in one query.
    engine_runs = Run.engine_runs([run_a, run_b])
    for label, run, field in ((_("A"), run_a, "run_a"), (_("B"), run_b, "run_b")):
        try:
            results.append(metrics.evaluate_run(pool, engine_runs[run.pk], settings, name=run.name))
        except metrics.EvaluationError as error:
            problem = describe_error(error, run=run.name)
            problems.append((field, _("Run %(label)s: %(problem)s") % {"label": label, "problem": problem}))
    if problems:
        raise ComparisonInputError.of(problems)
    try:
        return metrics.compare_results(results[0], results[1])
    except metrics.EvaluationError as error:  # settings or pools differ: cannot happen here, but never silent
        raise ComparisonInputError(describe_error(error)) from None


def default_comparison_name(run_a: Run, run_b: Run) -> str:
    """ "A vs B" within the name column's limit: two long run names are each shortened with "…"
    to half the room, so that both stay recognisable."""
    template = _("%(a)s vs %(b)s")
    room = (Comparison._meta.get_field("name").max_length or 200) - len(template % {"a": "", "b": ""})
    return template % {
        "a": Truncator(run_a.name).chars(room // 2),
        "b": Truncator(run_b.name).chars(room // 2),
    }


def comparison_create(
    *,
    project: Project,
    pool_version: PoolVersion,
    run_a: Run,
    run_b: Run,
    settings: metrics.Settings,
    by: User,
    name: str = "",
    notes: str = "",
) -> Comparison:
    """Validate A and B against the pool version under `settings`, compute, and store.

    Refused (ComparisonInputError): objects of another project, the same run twice, a pool whose
    judgments fail their hash check, or any input the engine refuses under these policies
    (duplicates, unjudged IDs under 'error', ties under 'error', extra or missing queries under
    'error'), each named with the run, file, line, query and value.
    """
    if pool_version.pool.project_id != project.pk:
        raise ComparisonInputError(_("This pool version belongs to another project."), field="pool_version")
    for run, field in ((run_a, "run_a"), (run_b, "run_b")):
        if run.project_id != project.pk:
            raise ComparisonInputError(_("This run belongs to another project."), field=field)
    if run_a.pk == run_b.pk:
        raise ComparisonInputError(
            _("Choose two different runs: a run compared with itself tells nothing."), field="run_b"
        )
    try:
        verify_pool(pool_version)
    except PoolIntegrityError as error:
        raise ComparisonInputError(
            _("Pool version %(version)s failed its hash check and cannot be scored: %(problem)s")
            % {"version": str(pool_version), "problem": str(error)},
            field="pool_version",
        ) from None
    # The hashed text is intact, but a stored row or an earlier comparison's record of the hash may
    # disagree: the version page says "do not use this version", so no new result is stored on it
    # (QA: one was). Scores already stored stay, and their pages say so. Parsing the text is
    # Python's work and checking the rows mostly the database's (~0.5 s each for a million
    # judgments; the driver lets go of the GIL while the database works), so the two overlap.
    with ThreadPoolExecutor(max_workers=1) as executor:
        parsed = executor.submit(parse_canonical, pool_version.canonical)
        problems = pool_version.integrity_problems()
        pool = _trusted_pool(pool_version, parsed.result())
    if problems:
        raise ComparisonInputError(
            _("Pool version %(version)s failed its integrity check and cannot be scored: %(problem)s")
            % {"version": str(pool_version), "problem": " ".join(problems)},
            field="pool_version",
        )
    engine_comparison = _compute(pool, run_a, run_b, settings)
    results = results_of(engine_comparison)
    try:
        # Its own transaction: the foreign keys are checked at its commit, so a run deleted while
        # the scores were computed (run_delete locks the row) becomes a clear refusal, not a 500.
        with transaction.atomic():
            comparison = Comparison.objects.create(
                project=project,
                name=name or default_comparison_name(run_a, run_b),
                notes=notes,
                pool_version=pool_version,
                pool_sha256=pool_version.sha256,
                run_a=run_a,
                run_b=run_b,
                k=settings.k,
                gain=settings.gain,
                unjudged=settings.unjudged,
                zero_idcg=settings.zero_idcg,
                ties=settings.ties,
                missing_queries=settings.missing_queries,
                extra_queries=settings.extra_queries,
                seed=settings.seed,
                results=results,
                summary=summary_of(results),
                engine={
                    "n_permutations": engine_comparison.n_permutations,
                    "n_resamples": engine_comparison.n_resamples,
                    "results_version": RESULTS_VERSION,
                },
                created_by=by,
            )
    except IntegrityError:
        raise ComparisonInputError(
            _("Run A or run B was deleted while this comparison was being computed; choose the runs again."),
            field="run_a",
        ) from None
    return comparison


def engine_settings(comparison: Comparison) -> metrics.Settings:
    return metrics.Settings(**comparison.settings)


def comparison_recompute(*, comparison: Comparison) -> list[str]:
    """Recompute from the pool version and both runs; the differences from the stored results.

    An empty list means every stored number was reproduced to the last digit. A pool that fails
    its hash check raises PoolIntegrityError.
    """
    pool = pool_for_scoring(comparison.pool_version)
    fresh = results_of(_compute(pool, comparison.run_a, comparison.run_b, engine_settings(comparison)))
    # Through JSON, as stored: the comparison is of the exact text of every number.
    fresh = json.loads(json.dumps(fresh))
    return _differences(comparison.results, fresh)


def _differences(stored: Any, fresh: Any, path: str = "results") -> list[str]:
    if isinstance(stored, dict) and isinstance(fresh, dict):
        found = []
        for key in sorted(set(stored) | set(fresh)):
            found.extend(_differences(stored.get(key), fresh.get(key), f"{path}.{key}"))
        return found
    if isinstance(stored, list) and isinstance(fresh, list) and len(stored) == len(fresh):
        found = []
        for i, (s, f) in enumerate(zip(stored, fresh, strict=True)):
            found.extend(_differences(s, f, f"{path}[{i}]"))
            if len(found) > 20:
                break
        return found
    if stored != fresh or type(stored) is not type(fresh):
        return [f"{path}: stored {stored!r}, recomputed {fresh!r}"]
    return []


# ---- Comparisons: reading the stored results ----------------------------------------------------


@dataclass(frozen=True)
class QueryRow:
    """One row of the per-query table (numbers from the stored engine results)."""

    index: int
    query_id: str
    a_ndcg: float | None
    b_ndcg: float | None
    delta: float | None
    a_dcg: float
    b_dcg: float
    idcg: float
    zero_idcg: bool
    excluded: bool
    a_missing: bool
    b_missing: bool
    a_unjudged: int
    b_unjudged: int

    @property
    def outcome(self) -> str:
        if self.delta is None:
            return "excluded"
        if self.delta > 0:
            return "improvement"
        if self.delta < 0:
            return "regression"
        return "tie"


class ComparisonResults:
    """Read access to a comparison's stored results: rows, filters, sorting, counts."""

    FILTERS = ("all", "regressions", "improvements", "ties", "excluded")
    SORTS = ("delta", "-delta", "query", "a", "b")

    def __init__(self, results: Mapping[str, Any]) -> None:
        if results.get("version") != RESULTS_VERSION:
            raise ValueError(
                f"stored results have version {results.get('version')!r}, expected {RESULTS_VERSION}"
            )
        self.data = results
        self.a = results["a"]
        self.b = results["b"]
        self.stats = results["comparison"]
        self.query_ids: list[str] = results["query_ids"]

    def __len__(self) -> int:
        return len(self.query_ids)

    def index_of(self, query_id: str) -> int | None:
        try:
            return self.query_ids.index(query_id)
        except ValueError:
            return None

    def row(self, i: int) -> QueryRow:
        d, a, b = self.data, self.a, self.b
        return QueryRow(
            index=i,
            query_id=self.query_ids[i],
            a_ndcg=a["ndcg"][i],
            b_ndcg=b["ndcg"][i],
            delta=d["delta"][i],
            a_dcg=a["dcg"][i],
            b_dcg=b["dcg"][i],
            idcg=d["idcg"][i],
            zero_idcg=d["zero_idcg"][i],
            excluded=d["excluded"][i],
            a_missing=a["missing"][i],
            b_missing=b["missing"][i],
            a_unjudged=a["unjudged"][i],
            b_unjudged=b["unjudged"][i],
        )

    def selected(self, *, show: str = "all", search: str = "", sort: str = "delta") -> list[int]:
        """Indexes of the rows to list, filtered and sorted; the default puts the worst regression first."""
        delta = self.data["delta"]
        indexes: Sequence[int] = range(len(self.query_ids))
        if search:
            needle = search.casefold()
            indexes = [i for i in indexes if needle in self.query_ids[i].casefold()]
        if show == "regressions":
            indexes = [i for i in indexes if delta[i] is not None and delta[i] < 0]
        elif show == "improvements":
            indexes = [i for i in indexes if delta[i] is not None and delta[i] > 0]
        elif show == "ties":
            indexes = [i for i in indexes if delta[i] is not None and delta[i] == 0]
        elif show == "excluded":
            indexes = [i for i in indexes if delta[i] is None]
        indexes = list(indexes)
        ids = self.query_ids
        if sort == "query":
            indexes.sort(key=ids.__getitem__)
        else:
            values = {"delta": delta, "-delta": delta, "a": self.a["ndcg"], "b": self.b["ndcg"]}.get(
                sort, delta
            )
            sign = -1.0 if sort == "-delta" else 1.0
            # Excluded queries (no value) go last; equal values keep the pool's query order.
            indexes.sort(
                key=lambda i: (values[i] is None, sign * values[i] if values[i] is not None else 0.0, i)
            )
        return indexes

    def worst_query(self) -> str | None:
        """The largest regression (B - A most negative), else the first query by the default order."""
        order = self.selected()
        return self.query_ids[order[0]] if order else None

    def sorted_deltas(self) -> list[float]:
        return sorted(v for v in self.data["delta"] if v is not None)

    def coverage_warning(self, settings: Mapping[str, Any]) -> bool:
        """True when unjudged IDs were scored as gain 0 in either system's top K."""
        return settings["unjudged"] == "zero" and (
            self.a["counts"]["unjudged_in_top_k"] > 0 or self.b["counts"]["unjudged_in_top_k"] > 0
        )


# ---- Comparisons: the per-query breakdown -------------------------------------------------------


@dataclass(frozen=True)
class Breakdown:
    """One query scored for A and B by `metrics.score_query`, under the saved or what-if settings."""

    query_id: str
    settings: metrics.Settings
    what_if: bool
    a: metrics.QueryResult | None
    b: metrics.QueryResult | None
    # Each run's refusal, named by run (both columns may say "not scored"); shown one per line.
    errors: tuple[str, ...]
    only_in_a: frozenset[str]
    only_in_b: frozenset[str]
    # The pool's own side (an empty ranking scored): the ideal rows and IDCG, which depend on the
    # pool, K and gain only; shown even when neither run can be scored (QA: "No judged document").
    pool_side: metrics.QueryResult


def comparison_breakdown(
    *, comparison: Comparison, query_id: str, k: int | None = None, gain: str | None = None
) -> Breakdown | None:
    """Score one query of the comparison for both runs, term by term; None if not in the pool.

    `k` and `gain` make it a what-if: the saved comparison and its stored results do not change.
    A pool failing its hash check raises PoolIntegrityError.
    """
    saved = engine_settings(comparison)
    settings = saved
    if (k is not None and k != saved.k) or (gain is not None and gain != saved.gain):
        settings = metrics.Settings(**{**saved.as_dict(), "k": k or saved.k, "gain": gain or saved.gain})
    grades = pool_query_grades(comparison.pool_version, query_id)
    if grades is None:
        return None
    results: list[metrics.QueryResult | None] = []
    errors: list[str] = []  # each run's own: both columns may say "not scored", so both are named
    # This query's rows of both runs, in one query (a run may hold a million rows).
    rows = {
        row.run_id: row.ranking()
        for row in RunQuery.objects.filter(
            run__in=[comparison.run_a_id, comparison.run_b_id], query_id=query_id
        )
    }
    for run in (comparison.run_a, comparison.run_b):
        ranking = rows.get(run.pk)
        try:
            results.append(
                metrics.score_query(
                    ranking.doc_ids if ranking else (),
                    grades,
                    settings,
                    scores=ranking.scores if ranking else None,
                    query_id=query_id,
                    source=run.file_name,
                    lines=ranking.lines if ranking else None,
                    missing_from_run=ranking is None,
                )
            )
        except metrics.EvaluationError as problem:
            results.append(None)
            errors.append(describe_error(problem, run=run.name))
    top = [
        frozenset(row.doc_id for row in result.positions if row.doc_id is not None) if result else frozenset()
        for result in results
    ]
    if None in results:
        # A refused side has no top K to compare with: its empty set tagged every document of the
        # other side "only in A" although the refused list held them (QA). No tags at all then;
        # the refused run's top K is not guessed either (under ties=error its order is undefined).
        top = [frozenset(), frozenset()]
    return Breakdown(
        query_id=query_id,
        settings=settings,
        what_if=settings != saved,
        a=results[0],
        b=results[1],
        errors=tuple(errors),
        only_in_a=top[0] - top[1],
        only_in_b=top[1] - top[0],
        pool_side=metrics.score_query((), grades, settings, query_id=query_id),
    )


# ---- Exports ------------------------------------------------------------------------------------


def _safe_name(file_name: str, fallback: str) -> str:
    name = PurePosixPath(file_name.replace("\\", "/")).name
    name = re.sub(r"[^\w.\-]+", "_", name).strip("._")
    return name or fallback


def report_json(comparison: Comparison) -> dict[str, Any]:
    """The computation report: the `evaluate --format json` shape plus what pins the inputs."""
    r = ComparisonResults(comparison.results)
    pool_version = comparison.pool_version
    counts = {
        "queries": r.a["counts"]["queries"],
        "evaluated": r.a["counts"]["evaluated"],
        "zero_idcg": r.a["counts"]["zero_idcg"],
        "excluded": r.a["counts"]["excluded"],
        "missing_from_run": {"a": r.a["counts"]["missing_from_run"], "b": r.b["counts"]["missing_from_run"]},
        "unjudged_in_top_k": {
            "a": r.a["counts"]["unjudged_in_top_k"],
            "b": r.b["counts"]["unjudged_in_top_k"],
        },
        "extra_queries_skipped": {
            "a": r.a["counts"]["extra_queries_skipped"],
            "b": r.b["counts"]["extra_queries_skipped"],
        },
    }
    queries = []
    for i, query in enumerate(r.query_ids):
        queries.append(
            {
                "query": query,
                "a": {"dcg": r.a["dcg"][i], "idcg": r.data["idcg"][i], "ndcg": r.a["ndcg"][i]},
                "b": {"dcg": r.b["dcg"][i], "idcg": r.data["idcg"][i], "ndcg": r.b["ndcg"][i]},
                "delta": r.data["delta"][i],
            }
        )
    stats = r.stats
    return {
        "comparison": {
            "mean_delta": stats["mean_delta"],
            "wins": stats["wins"],
            "ties": stats["ties"],
            "losses": stats["losses"],
            "randomization_p": stats["randomization_p"],
            "randomization_exact": stats["randomization_exact"],
            "n_permutations": stats["n_permutations"],
            "t_statistic": stats["t_statistic"],
            "t_test_p": stats["t_test_p"],
            "delta_ci95": stats["delta_ci95"],
            "n_resamples": stats["n_resamples"],
            "paired": stats["paired"],
        },
        # No grade map: the frozen pool (and the exported qrels) holds grades 0..3 already.
        "settings": engine_settings(comparison).as_dict() | {"grade_map": None},
        "policies": engine_settings(comparison).describe(),
        "counts": counts,
        "systems": {
            "a": {
                "name": comparison.run_a.name,
                "file": comparison.run_a.file_name,
                "sha256": comparison.run_a.sha256,
                "mean": r.a["mean"],
                "micro": r.a["micro"],
            },
            "b": {
                "name": comparison.run_b.name,
                "file": comparison.run_b.file_name,
                "sha256": comparison.run_b.sha256,
                "mean": r.b["mean"],
                "micro": r.b["micro"],
            },
        },
        "pool": {
            "name": pool_version.pool.name,
            "version": pool_version.number,
            "sha256": comparison.pool_sha256,
        },
        "queries": queries,
    }


def _csv_text(rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows(
        [["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row] for row in rows]
    )
    return out.getvalue()


def _queries_csv(report: Mapping[str, Any]) -> str:
    rows: list[list[Any]] = [["query_id", "a_dcg", "a_idcg", "a_ndcg", "b_dcg", "b_idcg", "b_ndcg", "delta"]]
    for q in report["queries"]:
        rows.append(
            [
                q["query"],
                q["a"]["dcg"],
                q["a"]["idcg"],
                q["a"]["ndcg"],
                q["b"]["dcg"],
                q["b"]["idcg"],
                q["b"]["ndcg"],
                q["delta"],
            ]
        )
    return _csv_text(rows)


def _summary_csv(report: Mapping[str, Any]) -> str:
    rows: list[list[Any]] = [["section", "name", "value"]]
    rows += [["settings", key, value] for key, value in report["settings"].items()]
    for key, value in report["counts"].items():
        if isinstance(value, dict):
            rows += [["counts", f"{key}.{system}", v] for system, v in value.items()]
        else:
            rows.append(["counts", key, value])
    for system in ("a", "b"):
        rows += [["system", f"{system}.{key}", value] for key, value in report["systems"][system].items()]
    for key, value in report["comparison"].items():
        if key == "delta_ci95":
            low, high = value if value else (None, None)
            rows += [["comparison", "delta_ci95.low", low], ["comparison", "delta_ci95.high", high]]
        else:
            rows.append(["comparison", key, value])
    rows += [["pool", key, value] for key, value in report["pool"].items()]
    return _csv_text(rows)


def evaluate_command(comparison: Comparison, qrels: str, run_a: str, run_b: str) -> str:
    s = engine_settings(comparison)
    return (
        f"python manage.py evaluate {qrels} {run_a} {run_b} --k {s.k} --gain {s.gain} --unjudged {s.unjudged} "
        f"--zero-idcg {s.zero_idcg} --ties {s.ties} --missing-queries {s.missing_queries} "
        f"--extra-queries {s.extra_queries} --seed {s.seed} --format json"
    )


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _markdown(comparison: Comparison, report: Mapping[str, Any], command: str) -> str:
    r = ComparisonResults(comparison.results)
    s, c, counts = report["settings"], report["comparison"], report["counts"]
    a, b = report["systems"]["a"], report["systems"]["b"]
    ci = c["delta_ci95"]
    lines = [
        f"# {comparison.name}",
        "",
        f"Pool **{report['pool']['name']} v{report['pool']['version']}** (SHA-256 `{report['pool']['sha256']}`), "
        f"K = {s['k']}, {s['gain']} gain. Delta = B − A (a win is a query where B scores higher).",
        "",
        "| | Run | Macro mean NDCG@K | Micro sum(DCG)/sum(IDCG) |",
        "|---|---|---|---|",
        f"| A | {a['name']} (`{a['file']}`) | {_fmt(a['mean'])} | {_fmt(a['micro'])} |",
        f"| B | {b['name']} (`{b['file']}`) | {_fmt(b['mean'])} | {_fmt(b['micro'])} |",
        "",
        f"- Mean delta (B − A): {_fmt(c['mean_delta'])}; wins / ties / losses: {c['wins']} / {c['ties']} / {c['losses']}",
        f"- Randomization (sign-flip) test p = {_fmt(c['randomization_p'])} "
        f"({'exact' if c['randomization_exact'] else str(c['n_permutations']) + ' permutations'}, seed {s['seed']})",
        "- Bootstrap 95% CI of the mean delta: "
        + (f"[{_fmt(ci[0])}, {_fmt(ci[1])}]" if ci else "—")
        + f" ({c['n_resamples']} resamples, seed {s['seed']})",
        f"- Paired t-test p = {_fmt(c['t_test_p'])}",
        "",
        "## Counts",
        "",
        f"- Queries: {counts['queries']}; evaluated: {counts['evaluated']}; zero IDCG: {counts['zero_idcg']}; "
        f"excluded: {counts['excluded']}",
        f"- Missing from run A / B: {counts['missing_from_run']['a']} / {counts['missing_from_run']['b']}",
        f"- Unjudged IDs in the top K of A / B: {counts['unjudged_in_top_k']['a']} / {counts['unjudged_in_top_k']['b']}",
    ]
    if r.coverage_warning(s):
        lines += [
            "",
            "**Coverage warning:** unjudged documents were scored as gain 0; the pool may not cover "
            "what these systems retrieve.",
        ]
    lines += ["", "## Policies", ""] + [f"- {p}" for p in report["policies"]]
    for title, show, sort in (
        ("Largest regressions", "regressions", "delta"),
        ("Largest improvements", "improvements", "-delta"),
    ):
        chosen = r.selected(show=show, sort=sort)[:10]
        lines += ["", f"## {title}", ""]
        if not chosen:
            lines.append("None.")
            continue
        lines += ["| Query | A | B | Delta (B − A) |", "|---|---|---|---|"]
        for i in chosen:
            row = r.row(i)
            lines.append(f"| {row.query_id} | {_fmt(row.a_ndcg)} | {_fmt(row.b_ndcg)} | {_fmt(row.delta)} |")
    lines += [
        "",
        "## Reproduce",
        "",
        "Every number above is in `report/report.json` and `report/queries.csv` at full precision. "
        "Recompute them from the files in this archive: in this folder, run `manage.py` of a ranking-lab "
        "checkout with its Python (`manage.py` is not in the archive), that is, with APP the checkout's folder:",
        "",
        f"    APP/.venv/bin/python APP/{command.removeprefix('python ')}",
        "",
    ]
    return "\n".join(lines)


def _pool_files(version: PoolVersion) -> tuple[str, dict[str, bytes]]:
    """(qrels path, files): the pool as the pools area exports it, TREC qrels when every ID can
    be written in TREC's whitespace-separated columns, else JSONL (which holds any ID)."""
    from annotator.pools import services as pool_exports

    for fmt in ("qrels", "jsonl"):
        try:
            data_name, text = pool_exports.export_data(version, fmt)
        except pool_exports.PoolExportError:
            continue
        data = text.encode("utf-8")
        manifest = pool_exports.export_manifest(version, fmt, data_name, data)
        path = f"pool/{data_name}"
        return path, {
            path: data,
            "pool/manifest.json": (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode(),
        }
    raise PoolIntegrityError(f"{version}: the pool could not be exported")


def _run_copy(run: Run, label: str) -> tuple[str, bytes]:
    """The parsed run in a format `evaluate` reads, whatever was uploaded (pasted lists have no
    file format of their own): TREC when the IDs allow it, else JSONL. Same rows, same scores
    (written with repr, so they read back to the same floats), same order."""
    engine_run = run.engine_run()
    for fmt, extension in (("trec", "trec"), ("jsonl", "jsonl")):
        stream = io.StringIO()
        try:
            formats.write_run(stream, engine_run, format=fmt)
        except metrics.EvaluationError:
            continue
        return f"runs/{label}.{extension}", stream.getvalue().encode("utf-8")
    raise metrics.EvaluationError(
        gettext_noop("run %(name)r cannot be written in a format evaluate reads"), {"name": run.name}
    )


def verify_comparison_pool(comparison: Comparison) -> None:
    """PoolIntegrityError unless the pool version still hashes to its record and that record is
    the hash the comparison was computed on: the one check before any of its numbers is shown or
    exported (QA: the export skipped the second, so a pool rewritten together with its hash was
    exported beside numbers computed on the old one)."""
    if problem := comparison.pinned_hash_problem():
        raise PoolIntegrityError(problem)
    verify_pool(comparison.pool_version)


def comparison_export(*, comparison: Comparison) -> tuple[str, bytes]:
    """One zip: the pool (qrels + manifest), both runs as uploaded (plus copies `evaluate` reads),
    the computation report in JSON and CSV, and a Markdown summary (README.md).

    The pool is checked first (verify_comparison_pool): never an export of a tampered pool.
    """
    pool_version = comparison.pool_version
    verify_comparison_pool(comparison)
    report = report_json(comparison)
    folder = f"comparison-{comparison.pk}"
    qrels_path, files = _pool_files(pool_version)
    copies = {}
    for label, run in (("a", comparison.run_a), ("b", comparison.run_b)):
        uploaded = f"runs/{label}/{_safe_name(run.file_name, f'run-{label}.txt')}"
        files[uploaded] = bytes(run.raw)
        copy_path, copy = _run_copy(run, label)
        files[copy_path] = copy
        copies[label] = copy_path
        files[f"runs/{label}.json"] = (
            json.dumps(
                {
                    "name": run.name,
                    "notes": run.notes,
                    "format": run.format,
                    "file": run.file_name,
                    "sha256": run.sha256,
                    "bytes": run.size,
                    "uploaded_as": uploaded,
                    "evaluate_copy": copy_path,
                    "uploaded_by": run.uploaded_by.get_username(),
                    "uploaded_at": run.uploaded_at.isoformat(),
                },
                ensure_ascii=False,
                indent=2,
            )
            + "\n"
        ).encode()
    command = evaluate_command(comparison, qrels_path, copies["a"], copies["b"])
    report["reproduce"] = command
    files["report/report.json"] = (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode()
    files["report/queries.csv"] = _queries_csv(report).encode()
    files["report/summary.csv"] = _summary_csv(report).encode()
    files["README.md"] = _markdown(comparison, report, command).encode()

    buffer = io.BytesIO()
    # The comparison's creation time, not "now": exporting twice gives identical archives.
    stamp = comparison.created_at.astimezone(UTC).timetuple()[:6]
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, content in files.items():
            info = zipfile.ZipInfo(f"{folder}/{path}", date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, content)
    return f"{folder}.zip", buffer.getvalue()
