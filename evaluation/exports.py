"""The comparison export: one zip with the pool, both runs, the report (JSON, CSV, Markdown) and a README."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC
from pathlib import PurePosixPath
from typing import Any

from annotator.models import PoolVersion
from annotator.pools.models import PoolIntegrityError
from evaluation import formats, metrics
from evaluation.comparisons import ComparisonResults, engine_settings
from evaluation.metrics.policies import gettext_noop
from evaluation.models import Comparison, Run
from evaluation.runs import verify_pool


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
