"""`evaluate`'s reports of several metrics or systems (text, json, csv), pure functions of the one
results shape with its `design` (`evaluation.metrics.compare_systems`).

One or two runs without --metrics keep the reports of `evaluation.reports`, byte for byte. The
JSON document is a stable interface, documented in evaluation/README.md; numbers are
full-precision floats, and only text rounds.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from evaluation.formats.values import escape_unprintable
from evaluation.metrics import DEFAULT_RELEVANT, Metric, Results
from evaluation.metrics.compare import N_PERMUTATIONS, N_RESAMPLES
from evaluation.metrics.results import ComparisonStats, SystemResult
from evaluation.reports import _one_line_json

PAIR_STATS = ("mean_delta", "wins", "ties", "losses", "randomization_p", "holm_p", "t_test_p", "delta_ci95")
SIGNIFICANCE = 0.05  # the level the text report marks results at; the JSON gives every p


def _value(system: SystemResult, metric: Metric) -> tuple[float | None, ...]:
    """A system's per-query values of one metric (None where excluded)."""
    return system.metrics[metric.name].per_query[metric.base.name]


def _pair(stats: ComparisonStats) -> dict[str, Any]:
    values = stats.stats_dict() | {"holm_p": stats.holm_p}
    return {"a": stats.a, "b": stats.b, "metric": stats.metric} | {key: values[key] for key in PAIR_STATS}


def _counts(shape: Results, metrics: tuple[Metric, ...]) -> dict[str, Any]:
    """The pool's counts, the per-system ones keyed by label, and what each metric left out (the
    same for every system: it depends on the pool)."""
    systems = shape.systems
    first = systems[0]
    return {
        "queries": first.run_counts["queries"],
        "missing_from_run": {s.label: s.run_counts["missing_from_run"] for s in systems},
        "unjudged_in_top_k": {s.label: s.run_counts["unjudged_in_top_k"] for s in systems},
        "extra_queries_skipped": {s.label: s.run_counts["extra_queries_skipped"] for s in systems},
        "metrics": {m.name: dict(first.metrics[m.name].counts) for m in metrics},
    }


def summary_document(shape: Results, metrics: tuple[Metric, ...], *, grade_map: str | None) -> dict[str, Any]:
    """Every section but the per-query table: settings, design, definitions, counts and the keys
    of the issue's interface (metrics, runs, means, pairs)."""
    assert shape.settings is not None and shape.design is not None  # compare_systems records both
    first = shape.systems[0]
    # Each metric has its own K (in its definition); the settings' K is the depth every run is
    # read to, the largest of them, where the unjudged and tie policies apply.
    settings = {"depth" if key == "k" else key: value for key, value in shape.settings.full_dict().items()}
    return {
        "settings": settings | {"grade_map": grade_map},
        "design": shape.design.to_dict(),
        "metrics": [m.name for m in metrics],
        "definitions": {m.name: first.metrics[m.name].definition for m in metrics},
        "runs": [{"label": s.label, "name": s.name} for s in shape.systems],
        "counts": _counts(shape, metrics),
        "means": {
            s.label: {m.name: s.metrics[m.name].aggregates["mean"] for m in metrics} for s in shape.systems
        },
        "pairs": [_pair(stats) for stats in shape.comparisons],
    }


def json_document(shape: Results, metrics: tuple[Metric, ...], *, grade_map: str | None) -> dict[str, Any]:
    summary = summary_document(shape, metrics, grade_map=grade_map)
    pairs = summary.pop("pairs")
    columns = {s.label: [_value(s, m) for m in metrics] for s in shape.systems}
    summary["per_query"] = [
        {"query": query}
        | {
            label: {m.name: column[i] for m, column in zip(metrics, values, strict=True)}
            for label, values in columns.items()
        }
        for i, query in enumerate(shape.query_ids)
    ]
    summary["pairs"] = pairs
    return summary


def render_json(shape: Results, metrics: tuple[Metric, ...], *, grade_map: str | None = None) -> str:
    return json.dumps(json_document(shape, metrics, grade_map=grade_map), ensure_ascii=False, indent=1) + "\n"


CSV_PREAMBLE = (
    "# ranking-lab evaluate report. Each line starting with # holds one section of the --format json "
    "report (settings, design, metrics, definitions, runs, counts, means, pairs) as JSON; the table "
    "starts at the line after them. No table line starts with #, and a field holding # is quoted."
)


def render_csv(shape: Results, metrics: tuple[Metric, ...], *, grade_map: str | None = None) -> str:
    """The sections as `# name {json}` lines, then one row per query: each run's value of each
    metric, full precision, empty where the query is excluded."""
    out = io.StringIO()
    out.write(CSV_PREAMBLE + "\n")
    for section, value in summary_document(shape, metrics, grade_map=grade_map).items():
        out.write(f"# {section} {_one_line_json(value)}\n")
    writer = csv.writer(out, lineterminator="\n")
    quoted = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(["query_id", *(f"{s.label}_{m.name}" for s in shape.systems for m in metrics)])
    columns = [_value(s, m) for s in shape.systems for m in metrics]
    for i, query in enumerate(shape.query_ids):
        row = [query, *("" if column[i] is None else repr(column[i]) for column in columns)]
        (quoted if "#" in query else writer).writerow(row)
    return out.getvalue()


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def _table(rows: list[list[str]]) -> list[str]:
    """Left-aligned columns two spaces apart, the first row the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def _family_words(shape: Results, metric: Metric) -> str:
    assert shape.design is not None
    if shape.design.family == "pairs-per-metric":
        size = sum(1 for c in shape.comparisons if c.metric == metric.name and c.randomization_p is not None)
        return f"Holm over the pairs on {metric.name} ({size} tests)"
    size = sum(1 for c in shape.comparisons if c.randomization_p is not None)
    return f"Holm over pairs x metrics ({size} tests)"


def render_text(shape: Results, metrics: tuple[Metric, ...], *, grade_map: str | None = None) -> str:
    """A table per metric (a column per run, then the mean), its pairs, then counts and policies."""
    settings, design = shape.settings, shape.design
    assert settings is not None and design is not None
    systems = shape.systems
    lines = [f"Runs: {', '.join(f'{s.label}={escape_unprintable(s.name or "")}' for s in systems)}"]
    if design.pairing == "baseline":
        lines.append(
            f"Compared: each run against the baseline {design.baseline} (deltas run - {design.baseline})."
        )
    else:
        lines.append("Compared: every pair (deltas b - a for the pair a, b).")
    for metric in metrics:
        definition = systems[0].metrics[metric.name].definition or {}
        measure = definition.get("measure", metric.measure(settings))
        lines += ["", f"# {metric.name} ({measure})"]
        values = [_value(s, metric) for s in systems]
        rows = [["query", *(s.label for s in systems)]]
        for i, query in enumerate(shape.query_ids):
            rows.append([query, *("excluded" if v[i] is None else f"{v[i]:.4f}" for v in values)])
        rows.append(["mean", *(_number(s.metrics[metric.name].aggregates["mean"]) for s in systems)])
        lines += _table(rows)
        counts = systems[0].metrics[metric.name].counts
        lines.append("  " + "; ".join(f"{key.replace('_', ' ')}: {value}" for key, value in counts.items()))
        pairs = [c for c in shape.comparisons if c.metric == metric.name]
        lines.append(f"  pairs, {_family_words(shape, metric)} of the randomization p:")
        rows = [["pair", "mean delta", "wins/ties/losses", "randomization p", "Holm p", "t-test p", "95% CI"]]
        notes = []
        for c in pairs:
            ci = "n/a" if c.delta_ci95 is None else f"[{c.delta_ci95[0]:+.4f}, {c.delta_ci95[1]:+.4f}]"
            delta = "n/a" if c.mean_delta is None else f"{c.mean_delta:+.4f}"
            rows.append(
                [
                    f"{c.b} - {c.a}",
                    delta,
                    f"{c.wins}/{c.ties}/{c.losses}",
                    _p(c.randomization_p),
                    _p(c.holm_p),
                    _p(c.t_test_p),
                    ci,
                ]
            )
            raw, adjusted = c.randomization_p, c.holm_p
            if raw is not None and adjusted is not None and raw < SIGNIFICANCE <= adjusted:
                notes.append(f"  {c.b} - {c.a}: p < {SIGNIFICANCE}, not significant after correction")
        lines += ["  " + line for line in _table(rows)] + notes
    counts = _counts(shape, metrics)
    lines += ["", f"Queries: {counts['queries']} in the pool."]
    for s in systems:
        lines.append(
            f"System {s.label}: missing from the run: {counts['missing_from_run'][s.label]}; unjudged IDs "
            f"within the deepest K: {counts['unjudged_in_top_k'][s.label]}; extra queries skipped: "
            f"{counts['extra_queries_skipped'][s.label]}"
        )
    lines.append(
        f"Statistics: paired randomization (sign-flip) test, exact over every sign pattern when there "
        f"are at most {N_PERMUTATIONS} of them, else {N_PERMUTATIONS} drawn with seed {settings.seed}; "
        f"95% BCa bootstrap CI ({N_RESAMPLES} resamples, seed {settings.seed}); paired t-test. "
        f"Holm-Bonferroni adjusts the randomization p over {design.family.replace('-', ' ')}."
    )
    lines.append("Policies:")
    lines.append(
        f"  each metric at its own K; every run read to depth {settings.k}, where the unjudged and tie "
        "policies apply; NDCG's IDCG from the whole pool's top K grades, discount log2(i + 1), i from 1"
    )
    lines.extend(f"  {text}" for text in settings.describe()[1:])  # the first is NDCG's K, above
    if settings.relevant == DEFAULT_RELEVANT:  # describe() states any other threshold itself
        lines.append(f"  relevant: a grade of {DEFAULT_RELEVANT} or more (recall, precision, RR and AP)")
    lines.append(
        f"  grade map applied when reading QRELS: {grade_map}"
        if grade_map
        else "  grade map: none (grades as read)"
    )
    return "\n".join(lines) + "\n"
