"""Readers and writers for judgments (qrels) and runs, pure Python; the formats are in `registry.py`.

All or nothing: the first problem raises `EvaluationError` naming the file, the line, the value
and what is allowed (`read_run(..., collect=n)`: up to n of them, as one `EvaluationErrors`), and
nothing partial is returned. The layouts are in evaluation/README.md.
"""

from __future__ import annotations

from typing import Literal

from evaluation.formats.builders import PURPOSES
from evaluation.formats.problems import EvaluationErrors, Problems
from evaluation.formats.registry import FORMATS, FileFormat, detect_format
from evaluation.formats.sources import Source, source_name
from evaluation.formats.values import format_grade_map, parse_grade_map
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import EvaluationError, gettext_noop

Purpose = Literal["compare", "pooling"]


def read_qrels(source: Source, *, format: str = "auto", grade_map: dict[int, int] | None = None) -> Pool:
    """Read judgments into a frozen `Pool`; grades outside 0..3 are refused unless `grade_map` maps them."""
    reader = FORMATS[detect_format(source, format, kind="qrels")].read_qrels
    assert reader is not None
    pool = reader(source, grade_map=grade_map)
    if not len(pool):
        raise EvaluationError(gettext_noop("no judgments found"), source=source_name(source))
    return pool


def read_run(
    source: Source,
    *,
    format: str = "auto",
    name: str | None = None,
    purpose: Purpose = "compare",
    collect: int | None = None,
) -> Run:
    """Read a run; its name defaults to the file name (e.g. "results.test").

    purpose="pooling" takes what pooling needs and comparing refuses (builders.PURPOSES): ranks
    with gaps (1, 3, 5), rows with neither score nor rank (file order), and the run is named by
    the file's one tag or `system` value. `collect=n` reads on past a refused line and raises the
    problems of the n earliest lines, and a count of the rest, as one `EvaluationErrors`."""
    reader = FORMATS[detect_format(source, format, kind="run")].read_run
    assert reader is not None
    run = reader(source, name=name, rules=PURPOSES[purpose], collect=collect)
    if not run.rows:
        # An empty file is almost always a pipeline that failed upstream; scored, it would quietly
        # give every query 0. (A run that answers some queries and not others is fine.)
        problems = Problems(collect)
        problems.add(EvaluationError(gettext_noop("no ranked documents found"), source=source_name(source)))
        problems.check()
    return run


def write_qrels(target: Source, pool: Pool, *, format: str = "auto") -> None:
    writer = FORMATS[detect_format(target, format, kind="qrels")].write_qrels
    assert writer is not None
    writer(target, pool)


def write_run(target: Source, run: Run, *, format: str = "auto") -> None:
    writer = FORMATS[detect_format(target, format, kind="run")].write_run
    if writer is None:
        writable = [name for name, fmt in FORMATS.items() if fmt.write_run is not None]
        raise EvaluationError(
            gettext_noop("unknown format %(format)r; allowed: auto, %(allowed)s"),
            {"format": format, "allowed": ", ".join(writable)},
        )
    writer(target, run)


__all__ = [
    "FORMATS",
    "EvaluationError",
    "EvaluationErrors",
    "FileFormat",
    "Purpose",
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
