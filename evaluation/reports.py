"""The `evaluate` command's outputs (text, json, csv) and the web export's report, as pure
functions of the one results shape (evaluation/metrics/results.py).

The JSON document is a stable interface, documented in evaluation/README.md; numbers are
full-precision floats, and only text rounds.
"""

from __future__ import annotations

import csv
import io
import json
import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any

from evaluation.formats.ids import spreadsheet_safe
from evaluation.formats.values import escape_unprintable
from evaluation.metrics import METRICS
from evaluation.metrics.batch import RunResult
from evaluation.metrics.compare import Comparison
from evaluation.metrics.ndcg import QueryResult
from evaluation.metrics.policies import Settings
from evaluation.metrics.results import ComparisonStats, Results

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


# The headline metric's per-query columns that every report lists (NDCG: dcg, idcg, ndcg).
QUERY_COLUMNS = ("dcg", "idcg", "ndcg")
# The comparison's statistics in each report, in their order there.
_CLI_STATS = ("mean_delta", "wins", "ties", "losses", "randomization_p", "t_test_p", "delta_ci95")
_EXPORT_STATS = (
    "mean_delta",
    "wins",
    "ties",
    "losses",
    "randomization_p",
    "randomization_exact",
    "n_permutations",
    "t_statistic",
    "t_test_p",
    "delta_ci95",
    "n_resamples",
    "paired",
)


def results_shape(results: Sequence[RunResult], comparison: Comparison | None = None) -> Results:
    """The engine's results in the one results shape (metrics/results.py) every report reads."""
    return Results.from_engine(results, [comparison] if comparison is not None else [])


def _first_comparison(shape: Results) -> ComparisonStats | None:
    return shape.comparisons[0] if shape.comparisons else None


def _stats(stats: ComparisonStats, keys: Sequence[str]) -> dict[str, Any]:
    values = stats.stats_dict()
    return {key: values[key] for key in keys}


def _counts(shape: Results) -> dict[str, Any]:
    """The pool's counts once, the per-system ones keyed by system label."""
    systems = shape.systems
    counts = systems[0].counts
    return {
        "queries": counts["queries"],
        "evaluated": counts["evaluated"],
        "zero_idcg": counts["zero_idcg"],
        "excluded": counts["excluded"],
        "missing_from_run": {s.label: s.counts["missing_from_run"] for s in systems},
        "unjudged_in_top_k": {s.label: s.counts["unjudged_in_top_k"] for s in systems},
        "extra_queries_skipped": {s.label: s.counts["extra_queries_skipped"] for s in systems},
    }


def _systems(shape: Results, pins: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, Any]:
    """Each system's name (or `pins[label]`, what identifies its run) and headline aggregates."""
    return {
        s.label: {
            **(pins[s.label] if pins is not None else {"name": s.name}),
            "mean": s.mean,
            "micro": s.micro,
        }
        for s in shape.systems
    }


def _queries(
    shape: Results, details: Sequence[Callable[[str], QueryResult]] | None = None
) -> list[dict[str, Any]]:
    """One entry per pool query: each system's QUERY_COLUMNS (and, given `details`, one per system,
    its per-position terms), then the delta of the first comparison if there is one."""
    columns = [system.headline.per_query for system in shape.systems]
    stats = _first_comparison(shape)
    queries = []
    for i, query in enumerate(shape.query_ids):
        entry: dict[str, Any] = {"query": query}
        for j, (system, column) in enumerate(zip(shape.systems, columns, strict=True)):
            values: dict[str, Any] = {name: column[name][i] for name in QUERY_COLUMNS}
            if details is not None:
                detail = details[j](query)
                values["positions"] = [asdict(row) for row in detail.positions]
                values["ideal"] = [asdict(row) for row in detail.ideal]
            entry[system.label] = values
        if stats is not None:
            entry["delta"] = stats.delta[i]
        queries.append(entry)
    return queries


def summary_report(shape: Results, *, grade_map: str | None = None) -> dict[str, Any]:
    """The report's sections other than the queries: settings, counts, systems (and comparison)."""
    assert shape.settings is not None  # the engine's results always carry their settings
    document: dict[str, Any] = {
        # The grade map changes every number, so it is recorded beside the scoring policies.
        "settings": shape.settings.as_dict() | {"grade_map": grade_map},
        "counts": _counts(shape),
        "systems": _systems(shape),
    }
    comparison = _first_comparison(shape)
    if comparison is not None:
        document["comparison"] = _stats(comparison, _CLI_STATS)
    return document


def json_report(
    results: Sequence[RunResult],
    comparison: Comparison | None = None,
    *,
    breakdown: bool = False,
    grade_map: str | None = None,
) -> dict[str, Any]:
    shape = results_shape(results, comparison)
    document = summary_report(shape, grade_map=grade_map)
    document["queries"] = _queries(shape, [result.explain for result in results] if breakdown else None)
    return document


def comparison_report(
    shape: Results,
    *,
    settings: Settings,
    systems: Mapping[str, Mapping[str, Any]],
    pool: Mapping[str, Any],
) -> dict[str, Any]:
    """The web export's computation report (report/report.json): the `evaluate --format json`
    numbers plus what pins the inputs. `systems`: label -> {name, file, sha256} of each run;
    `pool`: {name, version, sha256}. Stored results need not hold their settings: pass them."""
    stats = _first_comparison(shape)
    assert stats is not None  # an exported comparison holds B against A
    return {
        "comparison": _stats(stats, _EXPORT_STATS),
        # No grade map: the frozen pool (and the exported qrels) holds grades 0..3 already.
        "settings": settings.as_dict() | {"grade_map": None},
        "policies": settings.describe(),
        "counts": _counts(shape),
        "systems": _systems(shape, systems),
        "pool": dict(pool),
        "queries": _queries(shape),
    }


def _cell(value: Any, spreadsheet: bool) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    # Text only (IDs, names): a negative number is a number to a spreadsheet, not a formula.
    return spreadsheet_safe(value) if spreadsheet and isinstance(value, str) else value


def _csv_text(rows: Sequence[Sequence[Any]], spreadsheet: bool = False) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerows([[_cell(v, spreadsheet) for v in row] for row in rows])
    return out.getvalue()


def comparison_queries_csv(report: Mapping[str, Any], *, spreadsheet: bool = False) -> str:
    """report/queries.csv of the web export, from `comparison_report`; `spreadsheet`: text cells
    a spreadsheet would run as formulas get a "'" in front (formats.ids.spreadsheet_safe)."""
    labels = list(report["systems"])
    header = ["query_id"] + [f"{label}_{name}" for label in labels for name in QUERY_COLUMNS]
    rows: list[list[Any]] = [[*header, "delta"]]
    for q in report["queries"]:
        rows.append(
            [
                q["query"],
                *(q[label][name] for label in labels for name in QUERY_COLUMNS),
                q["delta"],
            ]
        )
    return _csv_text(rows, spreadsheet)


def comparison_summary_csv(report: Mapping[str, Any], *, spreadsheet: bool = False) -> str:
    """report/summary.csv of the web export, from `comparison_report`: one (section, name, value)
    row per figure; `spreadsheet` as in comparison_queries_csv."""
    rows: list[list[Any]] = [["section", "name", "value"]]
    rows += [["settings", key, value] for key, value in report["settings"].items()]
    for key, value in report["counts"].items():
        if isinstance(value, dict):
            rows += [["counts", f"{key}.{system}", v] for system, v in value.items()]
        else:
            rows.append(["counts", key, value])
    for system, values in report["systems"].items():
        rows += [["system", f"{system}.{key}", value] for key, value in values.items()]
    for key, value in report["comparison"].items():
        if key == "delta_ci95":
            low, high = value if value else (None, None)
            rows += [["comparison", "delta_ci95.low", low], ["comparison", "delta_ci95.high", high]]
        else:
            rows.append(["comparison", key, value])
    rows += [["pool", key, value] for key, value in report["pool"].items()]
    return _csv_text(rows, spreadsheet)


def _dash(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def comparison_markdown(shape: Results, report: Mapping[str, Any], *, title: str, command: str) -> str:
    """README.md of the web export: the headline, counts, policies, the largest regressions and
    improvements (from `shape`) and the command that recomputes the report (`comparison_report`)."""
    stats = _first_comparison(shape)
    assert stats is not None  # an exported comparison holds B against A
    s, c, counts = report["settings"], report["comparison"], report["counts"]
    a, b = report["systems"]["a"], report["systems"]["b"]
    ci = c["delta_ci95"]
    lines = [
        f"# {title}",
        "",
        f"Pool **{report['pool']['name']} v{report['pool']['version']}** "
        f"(SHA-256 `{report['pool']['sha256']}`), "
        f"K = {s['k']}, {s['gain']} gain. Delta = B − A (a win is a query where B scores higher).",
        "",
        "| | Run | Macro mean NDCG@K | Micro sum(DCG)/sum(IDCG) |",
        "|---|---|---|---|",
        f"| A | {a['name']} (`{a['file']}`) | {_dash(a['mean'])} | {_dash(a['micro'])} |",
        f"| B | {b['name']} (`{b['file']}`) | {_dash(b['mean'])} | {_dash(b['micro'])} |",
        "",
        f"- Mean delta (B − A): {_dash(c['mean_delta'])}; wins / ties / losses: {c['wins']} / {c['ties']} / "
        f"{c['losses']}",
        f"- Randomization (sign-flip) test p = {_dash(c['randomization_p'])} "
        f"({'exact' if c['randomization_exact'] else str(c['n_permutations']) + ' permutations'}, "
        f"seed {s['seed']})",
        "- Bootstrap 95% CI of the mean delta: "
        + (f"[{_dash(ci[0])}, {_dash(ci[1])}]" if ci else "—")
        + f" ({c['n_resamples']} resamples, seed {s['seed']})",
        f"- Paired t-test p = {_dash(c['t_test_p'])}",
        "",
        "## Counts",
        "",
        f"- Queries: {counts['queries']}; evaluated: {counts['evaluated']}; zero IDCG: "
        f"{counts['zero_idcg']}; excluded: {counts['excluded']}",
        f"- Missing from run A / B: {counts['missing_from_run']['a']} / {counts['missing_from_run']['b']}",
        f"- Unjudged IDs in the top K of A / B: {counts['unjudged_in_top_k']['a']} / "
        f"{counts['unjudged_in_top_k']['b']}",
    ]
    # Unjudged IDs scored as gain 0 in either system's top K.
    if s["unjudged"] == "zero" and any(n > 0 for n in counts["unjudged_in_top_k"].values()):
        lines += [
            "",
            "**Coverage warning:** unjudged documents were scored as gain 0; the pool may not cover "
            "what these systems retrieve.",
        ]
    lines += ["", "## Policies", ""] + [f"- {p}" for p in report["policies"]]
    position = {query: i for i, query in enumerate(shape.query_ids)}
    ndcg_a = shape.systems[0].headline.per_query["ndcg"]
    ndcg_b = shape.systems[1].headline.per_query["ndcg"]
    for heading, chosen in (
        ("Largest regressions", stats.regressions(shape.query_ids, 10)),
        ("Largest improvements", stats.improvements(shape.query_ids, 10)),
    ):
        lines += ["", f"## {heading}", ""]
        if not chosen:
            lines.append("None.")
            continue
        lines += ["| Query | A | B | Delta (B − A) |", "|---|---|---|---|"]
        for query, delta in chosen:
            i = position[query]
            lines.append(f"| {query} | {_dash(ndcg_a[i])} | {_dash(ndcg_b[i])} | {_dash(delta)} |")
    lines += [
        "",
        "## Reproduce",
        "",
        "Every number above is in `report/report.json` and `report/queries.csv` at full precision. Recompute "
        "them from the files in this archive: in this folder, run `manage.py` of a ranking-lab checkout with "
        "its Python (`manage.py` is not in the archive), that is, with APP the checkout's folder:",
        "",
        f"    APP/.venv/bin/python APP/{command.removeprefix('python ')}",
        "",
        "`report/breakdown.csv` holds every per-position term (grade, gain, discount, contribution, running "
        "DCG, and the ideal rows) of every query and system: what the same command writes with "
        "`--breakdown --format csv` in place of `--format json`.",
        "",
    ]
    return "\n".join(lines)


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
# lines at them, so a run named from such a file name would split its section in two.
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
    shape = results_shape(results, comparison)
    out = io.StringIO()
    out.write(CSV_PREAMBLE + "\n")
    for section, value in summary_report(shape, grade_map=grade_map).items():
        out.write(f"# {section} {_one_line_json(value)}\n")
    writer = csv.writer(out, lineterminator="\n")
    # A tool told to treat # as a comment (pandas' comment="#") would cut an unquoted "page#2" short.
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def write(row: Sequence[object]) -> None:
        (quoted if any("#" in str(value) for value in row) else writer).writerow(row)

    labels = [system.label for system in shape.systems]
    if breakdown:
        writer.writerow(("query_id", "system", "table", *POSITION_COLUMNS))
        for query in shape.query_ids:
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
    stats = _first_comparison(shape)
    header = ["query_id"]
    for label in labels:
        header += [f"{label}_{name}" for name in QUERY_COLUMNS]
    if stats is not None:
        header.append("delta")
    writer.writerow(header)
    columns = [system.headline.per_query for system in shape.systems]
    for i, query in enumerate(shape.query_ids):
        values: list[str] = [query]
        for column in columns:
            ndcg = column["ndcg"][i]
            values += [repr(column["dcg"][i]), repr(column["idcg"][i]), "" if ndcg is None else repr(ndcg)]
        if stats is not None:
            delta = stats.delta[i]
            values.append("" if delta is None else repr(delta))
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
    shape = results_shape(results, comparison)
    settings = shape.settings
    assert settings is not None  # the engine's results always carry their settings
    measure = METRICS[0].measure(settings)
    systems = shape.systems
    stats = _first_comparison(shape)
    lines: list[str] = []
    heading = "\t".join(f"{s.label}={escape_unprintable(s.name or '')}" for s in systems)
    lines.append(f"# {measure:<20}\tquery\t{heading}" + ("\tb-a" if stats is not None else ""))
    values = [s.headline.per_query["ndcg"] for s in systems]
    for i, query in enumerate(shape.query_ids):
        row = f"{measure:<22}\t{query}\t" + "\t".join(_fmt(v[i]) for v in values)
        if stats is not None:
            delta = stats.delta[i]
            row += "\t" + ("excluded" if delta is None else f"{delta:+.4f}")
        lines.append(row)
    all_row = f"{measure:<22}\tall\t" + "\t".join(_aggregate(s.mean) for s in systems)
    if stats is not None:
        all_row += "\t" + ("n/a" if stats.mean_delta is None else f"{stats.mean_delta:+.4f}")
    lines.append(all_row)

    counts = systems[0].counts
    lines.append("")
    lines.append(
        f"Queries: {counts['queries']} in the pool, {counts['evaluated']} evaluated, "
        f"{counts['zero_idcg']} with zero IDCG, {counts['excluded']} excluded."
    )
    for system in systems:
        c = system.counts
        lines.append(f"System {system.label}: {escape_unprintable(system.name or '')}")
        lines.append(
            f"  NDCG@{settings.k}, macro mean over {c['evaluated']} "
            f"{'query' if c['evaluated'] == 1 else 'queries'} "
            f"(the headline): {_aggregate(system.mean)}"
        )
        lines.append(f"  micro sum(DCG)/sum(IDCG), a different number: {_aggregate(system.micro)}")
        lines.append(
            f"  missing from the run: {c['missing_from_run']}; unjudged IDs in the top {settings.k}: "
            f"{c['unjudged_in_top_k']}; extra queries skipped: {c['extra_queries_skipped']}"
        )
    if stats is not None:
        lines.append(f"Comparison, b - a over {stats.paired} {'query' if stats.paired == 1 else 'queries'}:")
        lines.append(
            f"  mean delta {_aggregate(stats.mean_delta)}; b wins {stats.wins}, ties {stats.ties}, loses "
            f"{stats.losses}"
        )
        kind = "exact, all sign patterns" if stats.randomization_exact else f"seed {stats.seed}"
        lines.append(
            f"  paired randomization (sign-flip) test: p = {_p(stats.randomization_p)} "
            f"({stats.n_permutations} permutations, {kind})"
        )
        lines.append(f"  paired t-test: p = {_p(stats.t_test_p)}")
        ci = stats.delta_ci95
        shown = "n/a" if ci is None else f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"
        lines.append(
            f"  95% bootstrap CI of the mean delta: {shown} ({stats.n_resamples} resamples, seed "
            f"{stats.seed})"
        )
        for title, items in (
            ("largest improvements", stats.improvements(shape.query_ids)),
            ("largest regressions", stats.regressions(shape.query_ids)),
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
        for query in shape.query_ids:
            for system, result in zip(systems, results, strict=True):
                lines.append("")
                lines.extend(_breakdown_text(system.label, result.explain(query)))
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
        f"query {detail.query_id}, system {label}: DCG {detail.dcg:.4f} / IDCG {detail.idcg:.4f} = NDCG "
        f"{ndcg}  (candidate-only contrast, not NDCG: {contrast})"
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
    # length, Chinese included, would push its row's numbers out of their columns).
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
