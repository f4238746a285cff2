"""Readers and writers for judgments (qrels) and runs: TREC, CSV and JSONL. Pure Python, no Django.

    pool = read_qrels("qrels.test", grade_map=parse_grade_map("-1:0,4:3"))
    run = read_run("results.test")            # format from the extension, TREC by default
    write_run("results.csv", run)             # read_run("results.csv") gives the same run back

Readers stream the file line by line and are all-or-nothing: the first problem raises
`EvaluationError` naming the file, the line, the value and what is allowed, and nothing partial
is returned. Column/key layouts are documented in `trec.py` and `tabular.py`.
"""

from __future__ import annotations

from evaluation.formats.common import (
    FORMATS,
    Format,
    InputFormat,
    Source,
    detect_format,
    format_grade_map,
    parse_grade_map,
    source_name,
)
from evaluation.formats.tabular import (
    read_csv_qrels,
    read_csv_run,
    read_jsonl_qrels,
    read_jsonl_run,
    write_csv_qrels,
    write_csv_run,
    write_jsonl_qrels,
    write_jsonl_run,
)
from evaluation.formats.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import EvaluationError, gettext_noop


def read_qrels(source: Source, *, format: str = "auto", grade_map: dict[int, int] | None = None) -> Pool:
    """Read judgments into a frozen `Pool`; grades outside 0..3 are refused unless `grade_map` maps them."""
    kind = detect_format(source, format)
    reader = {"trec": read_trec_qrels, "csv": read_csv_qrels, "jsonl": read_jsonl_qrels}[kind]
    pool = reader(source, grade_map=grade_map)
    if not len(pool):
        raise EvaluationError(gettext_noop("no judgments found"), source=source_name(source))
    return pool


def read_run(source: Source, *, format: str = "auto", name: str | None = None) -> Run:
    """Read a run; its name defaults to the file name (e.g. "results.test")."""
    kind = detect_format(source, format)
    reader = {"trec": read_trec_run, "csv": read_csv_run, "jsonl": read_jsonl_run}[kind]
    run = reader(source, name=name)
    if not run.rows:
        # An empty file is almost always a pipeline that failed upstream; scored, it would quietly
        # give every query 0. (A run that answers some queries and not others is fine.)
        raise EvaluationError(gettext_noop("no ranked documents found"), source=source_name(source))
    return run


def write_qrels(target: Source, pool: Pool, *, format: str = "auto") -> None:
    kind = detect_format(target, format)
    writer = {"trec": write_trec_qrels, "csv": write_csv_qrels, "jsonl": write_jsonl_qrels}[kind]
    writer(target, pool)


def write_run(target: Source, run: Run, *, format: str = "auto") -> None:
    kind = detect_format(target, format)
    writer = {"trec": write_trec_run, "csv": write_csv_run, "jsonl": write_jsonl_run}[kind]
    writer(target, run)


__all__ = [
    "FORMATS",
    "EvaluationError",
    "Format",
    "InputFormat",
    "Pool",
    "Run",
    "detect_format",
    "format_grade_map",
    "parse_grade_map",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
