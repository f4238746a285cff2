"""The comparison export: one zip with the pool, both runs, the report (JSON, CSV, Markdown) and a README."""

from __future__ import annotations

import io
import json
import re
import tempfile
import zipfile
from datetime import UTC
from pathlib import Path, PurePosixPath
from typing import Any

from django.core.management import call_command

from annotator.jobs.services import runs_inline
from annotator.models import PoolVersion
from annotator.pools import files as pool_exports
from annotator.pools.models import PoolIntegrityError
from evaluation import formats, metrics, reports
from evaluation.comparisons import engine_settings
from evaluation.metrics.policies import gettext_noop
from evaluation.models import Comparison, Run
from evaluation.runs import verify_pool


def _safe_name(file_name: str, fallback: str) -> str:
    name = PurePosixPath(file_name.replace("\\", "/")).name
    name = re.sub(r"[^\w.\-]+", "_", name).strip("._")
    return name or fallback


def report_json(comparison: Comparison, shape: metrics.Results) -> dict[str, Any]:
    """The computation report of `shape` (the comparison's stored results, read): the `evaluate
    --format json` numbers plus what pins the inputs (the runs and the pool, from the models)."""
    pool_version = comparison.pool_version
    return reports.comparison_report(
        shape,
        settings=engine_settings(comparison),
        systems={
            label: {"name": run.name, "file": run.file_name, "sha256": run.sha256}
            for label, run in (("a", comparison.run_a), ("b", comparison.run_b))
        },
        pool={
            "name": pool_version.pool.name,
            "version": pool_version.number,
            "sha256": comparison.pool_sha256,
        },
    )


def evaluate_arguments(comparison: Comparison) -> list[str]:
    """The comparison's settings as `evaluate` options."""
    s = engine_settings(comparison)
    return [
        *("--k", str(s.k), "--gain", s.gain, "--unjudged", s.unjudged, "--zero-idcg", s.zero_idcg),
        *("--ties", s.ties, "--missing-queries", s.missing_queries),
        *("--extra-queries", s.extra_queries, "--seed", str(s.seed)),
    ]


def evaluate_command(comparison: Comparison, qrels: str, run_a: str, run_b: str) -> str:
    options = " ".join(evaluate_arguments(comparison))
    return f"python manage.py evaluate {qrels} {run_a} {run_b} {options} --format json"


BREAKDOWN_CSV = "report/breakdown.csv"


def breakdown_csv(
    comparison: Comparison, files: dict[str, bytes], qrels: str, run_a: str, run_b: str
) -> bytes:
    """Every per-position term of every query and system, exactly as `evaluate --breakdown --format
    csv` writes it from the bundle's own pool and run copies (the command runs on them, in a
    temporary folder laid out as the bundle is), so a spreadsheet check needs no rebuilding."""
    with tempfile.TemporaryDirectory(prefix="ranking-lab-export-") as folder:
        paths = []
        for name in (qrels, run_a, run_b):
            path = Path(folder, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(files[name])
            paths.append(str(path))
        out = io.StringIO()
        arguments = [*paths, *evaluate_arguments(comparison), "--breakdown", "--format", "csv"]
        call_command("evaluate", *arguments, stdout=out)
    return out.getvalue().encode()


def _pool_files(version: PoolVersion) -> tuple[str, dict[str, bytes]]:
    """(qrels path, files): the pool as the pools area exports it, TREC qrels when every ID can
    be written in TREC's whitespace-separated columns, else JSONL (which holds any ID)."""
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
    exported, so a pool rewritten together with its hash is never exported beside numbers
    computed on the old one."""
    if problem := comparison.pinned_hash_problem():
        raise PoolIntegrityError(problem)
    verify_pool(comparison.pool_version)


SPREADSHEET_NOTE = """
## Opening the CSV files in a spreadsheet

Some query IDs or names start with =, +, -, @, a tab or a carriage return, so a spreadsheet opening
`report/queries.csv` or `report/summary.csv` runs them as formulas. Those files keep every value as
written (they match `report/report.json`); the `-spreadsheet.csv` copies beside them put a ' in front
of such cells, so a spreadsheet shows them as text. Read the values from the plain files.
"""


def exports_in_background(comparison: Comparison) -> bool:
    """The zip holds the whole pool version: past JOB_INLINE_LIMITS["export"] judgments a job writes it."""
    return not runs_inline("export", comparison.pool_version.counts.get("judgments", 0))


def comparison_export(*, comparison: Comparison) -> tuple[str, bytes]:
    """One zip: the pool (qrels + manifest), both runs as uploaded (plus copies `evaluate` reads),
    the computation report in JSON and CSV, and a Markdown summary (README.md).

    The pool is checked first (verify_comparison_pool): never an export of a tampered pool.
    """
    pool_version = comparison.pool_version
    verify_comparison_pool(comparison)
    shape = metrics.Results.from_dict(comparison.results)
    report = report_json(comparison, shape)
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
    files[BREAKDOWN_CSV] = breakdown_csv(comparison, files, qrels_path, copies["a"], copies["b"])
    report["reproduce"] = command
    files["report/report.json"] = (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode()
    readme = reports.comparison_markdown(shape, report, title=comparison.name, command=command)
    for name, write in (
        ("queries", reports.comparison_queries_csv),
        ("summary", reports.comparison_summary_csv),
    ):
        files[f"report/{name}.csv"] = write(report).encode()
        # Some cell (a query ID, a run or file name) would run as a formula in a spreadsheet.
        if (safe := write(report, spreadsheet=True).encode()) != files[f"report/{name}.csv"]:
            files[f"report/{name}-spreadsheet.csv"] = safe
    if "report/queries-spreadsheet.csv" in files or "report/summary-spreadsheet.csv" in files:
        readme += SPREADSHEET_NOTE
    files["README.md"] = readme.encode()

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
