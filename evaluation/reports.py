"""The `evaluate` command's outputs (text, json, csv), as pure functions of the library's results.

The JSON document is a stable interface (documented in the README):

    {"settings": {...Settings.as_dict(), "grade_map": "-1:0,4:3" or null},
     "counts": {"queries", "evaluated", "zero_idcg", "excluded",
                "missing_from_run": {"a", "b"}, "unjudged_in_top_k": {"a", "b"},
                "extra_queries_skipped": {"a", "b"}},
     "systems": {"a": {"name", "mean", "micro"}, "b": {...}},
     "comparison": {"mean_delta", "wins", "ties", "losses", "randomization_p", "t_test_p",
                    "delta_ci95": [low, high]},
     "queries": [{"query", "a": {"dcg", "idcg", "ndcg"}, "b": {...}, "delta"}]}

`b`, `comparison` and `delta` appear only with two runs; `ndcg` and `delta` are null for an
excluded query; with `breakdown` every system of every query also has `positions` and `ideal`
(lists of the PositionRow fields). Numbers are full-precision floats; only text rounds.
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from evaluation.formats.common import escape_unprintable
from evaluation.metrics.batch import RunResult
from evaluation.metrics.compare import Comparison
from evaluation.metrics.ndcg import QueryResult

LABELS = ("a", "b")
POSITION_COLUMNS = (
    "rank",
    "doc_id",
    "grade",
    "unjudged",
    "gain",
    "discount",
    "contribution",
    "cumulative",
    "score",
    "tied",
)


def _none_if_nan(value: float) -> float | None:
    return None if math.isnan(value) else value


def _breakdown(detail: QueryResult) -> dict[str, Any]:
    return {
        "positions": [asdict(row) for row in detail.positions],
        "ideal": [asdict(row) for row in detail.ideal],
    }


def summary_report(
    results: Sequence[RunResult],
    comparison: Comparison | None = None,
    *,
    grade_map: str | None = None,
) -> dict[str, Any]:
    """The report's sections other than the queries: settings, counts, systems (and comparison)."""
    first = results[0]
    labels = LABELS[: len(results)]
    counts = first.counts
    document: dict[str, Any] = {
        # The grade map changes every number, so it is recorded beside the scoring policies.
        "settings": first.settings.as_dict() | {"grade_map": grade_map},
        "counts": {
            "queries": counts.queries,
            "evaluated": counts.evaluated,
            "zero_idcg": counts.zero_idcg,
            "excluded": counts.excluded,
            "missing_from_run": {
                label: r.counts.missing_from_run for label, r in zip(labels, results, strict=True)
            },
            "unjudged_in_top_k": {
                label: r.counts.unjudged_in_top_k for label, r in zip(labels, results, strict=True)
            },
            "extra_queries_skipped": {
                label: r.counts.extra_queries_skipped for label, r in zip(labels, results, strict=True)
            },
        },
        "systems": {
            label: {"name": r.name, "mean": r.mean, "micro": r.micro}
            for label, r in zip(labels, results, strict=True)
        },
    }
    if comparison is not None:
        document["comparison"] = {
            "mean_delta": comparison.mean_delta,
            "wins": comparison.wins,
            "ties": comparison.ties,
            "losses": comparison.losses,
            "randomization_p": comparison.randomization_p,
            "t_test_p": comparison.t_test_p,
            "delta_ci95": list(comparison.delta_ci95) if comparison.delta_ci95 is not None else None,
        }
    return document


def json_report(
    results: Sequence[RunResult],
    comparison: Comparison | None = None,
    *,
    breakdown: bool = False,
    grade_map: str | None = None,
) -> dict[str, Any]:
    first = results[0]
    labels = LABELS[: len(results)]
    document = summary_report(results, comparison, grade_map=grade_map)
    columns = [(r.dcg.tolist(), r.idcg.tolist(), r.ndcg.tolist()) for r in results]
    deltas = comparison.delta.tolist() if comparison is not None else None
    queries = []
    for i, query in enumerate(first.query_ids):
        entry: dict[str, Any] = {"query": query}
        for label, result, (dcg, idcg, ndcg) in zip(labels, results, columns, strict=True):
            system: dict[str, Any] = {"dcg": dcg[i], "idcg": idcg[i], "ndcg": _none_if_nan(ndcg[i])}
            if breakdown:
                system.update(_breakdown(result.explain(query)))
            entry[label] = system
        if deltas is not None:
            entry["delta"] = _none_if_nan(deltas[i])
        queries.append(entry)
    document["queries"] = queries
    return document


def render_json(
    results: Sequence[RunResult],
    comparison: Comparison | None = None,
    *,
    breakdown: bool = False,
    grade_map: str | None = None,
) -> str:
    document = json_report(results, comparison, breakdown=breakdown, grade_map=grade_map)
    return json.dumps(document, ensure_ascii=False, indent=1) + "\n"


CSV_PREAMBLE = (
    "# ranking-lab evaluate report. Each line starting with # holds one section of the --format json "
    "report (settings, counts, systems, comparison) as JSON; the table starts at the line after them. "
    "No table line starts with #, and a field holding # is quoted."
)


# json.dumps escapes C0 controls but leaves these raw; str.splitlines() and other readers break
# lines at them, so a run named from such a file name split its section in two (QA).
_LINE_BREAKS_JSON_KEEPS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


def _one_line_json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False).translate(_LINE_BREAKS_JSON_KEEPS)


def render_csv(
    results: Sequence[RunResult],
    comparison: Comparison | None = None,
    *,
    breakdown: bool = False,
    grade_map: str | None = None,
) -> str:
    """The report's sections as `# name {json}` lines, then per-query rows (full precision), or
    with `breakdown` one row per position of every table.

    The contract wants every report to state its counts and policies, and a bare table cannot;
    the sections come first so that a reader stops skipping at the first line without "#".
    """
    out = io.StringIO()
    out.write(CSV_PREAMBLE + "\n")
    for section, value in summary_report(results, comparison, grade_map=grade_map).items():
        out.write(f"# {section} {_one_line_json(value)}\n")
    writer = csv.writer(out, lineterminator="\n")
    # A tool told to treat # as a comment (pandas' comment="#") would cut an unquoted "page#2" short.
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def write(row: Sequence[object]) -> None:
        (quoted if any("#" in str(value) for value in row) else writer).writerow(row)

    labels = LABELS[: len(results)]
    if breakdown:
        writer.writerow(("query_id", "system", "table", *POSITION_COLUMNS))
        for query in results[0].query_ids:
            for label, result in zip(labels, results, strict=True):
                detail = result.explain(query)
                for table, rows in (("ranking", detail.positions), ("ideal", detail.ideal)):
                    for row in rows:
                        write(
                            (
                                query,
                                label,
                                table,
                                *(
                                    "" if v is None else repr(v) if isinstance(v, float) else v
                                    for v in asdict(row).values()
                                ),
                            )
                        )
        return out.getvalue()
    header = ["query_id"]
    for label in labels:
        header += [f"{label}_dcg", f"{label}_idcg", f"{label}_ndcg"]
    if comparison is not None:
        header.append("delta")
    writer.writerow(header)
    columns = [(r.dcg.tolist(), r.idcg.tolist(), r.ndcg.tolist()) for r in results]
    deltas = comparison.delta.tolist() if comparison is not None else None
    for i, query in enumerate(results[0].query_ids):
        values: list[str] = [query]
        for dcg, idcg, ndcg in columns:
            values += [repr(dcg[i]), repr(idcg[i]), "" if math.isnan(ndcg[i]) else repr(ndcg[i])]
        if deltas is not None:
            values.append("" if math.isnan(deltas[i]) else repr(deltas[i]))
        write(values)
    return out.getvalue()


def _fmt(value: float | None, digits: int = 4) -> str:
    """A per-query NDCG for display: None/NaN only ever means an excluded query."""
    return "excluded" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def _aggregate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def render_text(
    results: Sequence[RunResult],
    comparison: Comparison | None = None,
    *,
    breakdown: bool = False,
    grade_map: str | None = None,
) -> str:
    """trec_eval's per-query table (measure, query, value), then a summary in words."""
    first = results[0]
    settings = first.settings
    measure = f"ndcg_cut_{settings.k}"
    labels = LABELS[: len(results)]
    lines: list[str] = []
    heading = "\t".join(
        f"{label}={escape_unprintable(r.name)}" for label, r in zip(labels, results, strict=True)
    )
    lines.append(f"# {measure:<20}\tquery\t{heading}" + ("\tb-a" if comparison is not None else ""))
    values = [r.ndcg.tolist() for r in results]
    deltas = comparison.delta.tolist() if comparison is not None else None
    for i, query in enumerate(first.query_ids):
        row = f"{measure:<22}\t{query}\t" + "\t".join(_fmt(v[i]) for v in values)
        if deltas is not None:
            row += "\t" + ("excluded" if math.isnan(deltas[i]) else f"{deltas[i]:+.4f}")
        lines.append(row)
    all_row = f"{measure:<22}\tall\t" + "\t".join(_aggregate(r.mean) for r in results)
    if comparison is not None:
        all_row += "\t" + ("n/a" if comparison.mean_delta is None else f"{comparison.mean_delta:+.4f}")
    lines.append(all_row)

    counts = first.counts
    lines.append("")
    lines.append(
        f"Queries: {counts.queries} in the pool, {counts.evaluated} evaluated, {counts.zero_idcg} with zero IDCG, "
        f"{counts.excluded} excluded."
    )
    for label, result in zip(labels, results, strict=True):
        c = result.counts
        lines.append(f"System {label}: {escape_unprintable(result.name)}")
        lines.append(
            f"  NDCG@{settings.k}, macro mean over {c.evaluated} {'query' if c.evaluated == 1 else 'queries'} "
            f"(the headline): {_aggregate(result.mean)}"
        )
        lines.append(f"  micro sum(DCG)/sum(IDCG), a different number: {_aggregate(result.micro)}")
        lines.append(
            f"  missing from the run: {c.missing_from_run}; unjudged IDs in the top {settings.k}: "
            f"{c.unjudged_in_top_k}; extra queries skipped: {c.extra_queries_skipped}"
        )
    if comparison is not None:
        lines.append(
            f"Comparison, b - a over {comparison.paired} {'query' if comparison.paired == 1 else 'queries'}:"
        )
        lines.append(
            f"  mean delta {_aggregate(comparison.mean_delta)}; b wins {comparison.wins}, ties {comparison.ties}, "
            f"loses {comparison.losses}"
        )
        kind = "exact, all sign patterns" if comparison.randomization_exact else f"seed {comparison.seed}"
        lines.append(
            f"  paired randomization (sign-flip) test: p = {_p(comparison.randomization_p)} "
            f"({comparison.n_permutations} permutations, {kind})"
        )
        lines.append(f"  paired t-test: p = {_p(comparison.t_test_p)}")
        ci = comparison.delta_ci95
        shown = "n/a" if ci is None else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"
        lines.append(
            f"  95% bootstrap CI of the mean delta: {shown} ({comparison.n_resamples} resamples, seed {comparison.seed})"
        )
        for title, items in (
            ("largest improvements", comparison.improvements()),
            ("largest regressions", comparison.regressions()),
        ):
            listed = ", ".join(f"{query} {delta:+.4f}" for query, delta in items) or "none"
            lines.append(f"  {title}: {listed}")
    lines.append("Policies:")
    lines.extend(f"  {text}" for text in settings.describe())
    lines.append(
        f"  grade map applied when reading QRELS: {grade_map}"
        if grade_map
        else "  grade map: none (grades as read)"
    )
    if breakdown:
        for query in first.query_ids:
            for label, result in zip(labels, results, strict=True):
                lines.append("")
                lines.extend(_breakdown_text(label, result.explain(query)))
    return "\n".join(lines) + "\n"


# Marks (Thai and Devanagari vowel signs, variation selectors) and format characters (zero-width
# joiner) take no column of their own.
_ZERO_WIDTH = frozenset({"Mn", "Me", "Cf"})


def _display_width(text: str) -> int:
    """Terminal columns of `text`: CJK wide characters take two, combining marks none."""
    return sum(
        0 if unicodedata.category(c) in _ZERO_WIDTH else 2 if unicodedata.east_asian_width(c) in "WF" else 1
        for c in text
    )


def _left(text: str, width: int) -> str:
    return text + " " * (width - _display_width(text))


def _right(text: str, width: int) -> str:
    return " " * (width - _display_width(text)) + text


def _breakdown_text(label: str, detail: QueryResult) -> list[str]:
    ndcg = "excluded" if detail.ndcg is None else f"{detail.ndcg:.4f}"
    contrast = "n/a" if detail.candidate_only_ndcg is None else f"{detail.candidate_only_ndcg:.4f}"
    lines = [
        f"query {detail.query_id}, system {label}: DCG {detail.dcg:.4f} / IDCG {detail.idcg:.4f} = NDCG {ndcg}"
        f"  (candidate-only contrast, not NDCG: {contrast})"
    ]
    header = ("rank", "doc", "grade", "gain", "log2(i+1)", "contribution", "cumulative")
    tables = {
        title: [
            (
                str(row.rank),
                "(empty)" if row.doc_id is None else row.doc_id,
                "unjudged" if row.unjudged else "-" if row.grade is None else str(row.grade),
                f"{row.gain:g}",
                f"{row.discount:.4f}",
                f"{row.contribution:.4f}",
                f"{row.cumulative:.4f}",
                f"  tied x{row.tied}" if row.tied > 1 else "",
            )
            for row in rows
        ]
        for title, rows in (("ranking", detail.positions), ("ideal", detail.ideal))
    }
    # One set of widths for both tables, so that the ranking and the ideal line up (an ID of any
    # length, Chinese included, used to push its row's numbers out of their columns).
    cells = [header, *(cells[:7] for rows in tables.values() for cells in rows)]
    widths = [max(_display_width(row[column]) for row in cells) for column in range(7)]

    def line(cells: Sequence[str], tied: str = "") -> str:
        rank, doc, grade, gain, discount, contribution, cumulative = cells
        return (
            f"    {_right(rank, widths[0])}  {_left(doc, widths[1])}  {_left(grade, widths[2])}  "
            f"{_right(gain, widths[3])} / {_right(discount, widths[4])} = {_right(contribution, widths[5])}  "
            f"{_right(cumulative, widths[6])}{tied}"
        ).rstrip()

    for title, rows in tables.items():
        lines.append(f"  {title}:")
        lines.append(line(header))
        lines.extend(line(cells[:7], cells[7]) for cells in rows)
    return lines
