"""The file formats, one entry each, and `detect_format`: the one rule for which format a file is in.

Every path that reads or writes judgments, runs, documents or queries (the web imports, pooling,
run uploads, pool imports and exports, `evaluate`, the management commands) asks `detect_format`,
and builds its choices and its lists of names from `FORMATS`. Pure: no Django.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal

from evaluation.formats.csv import read_csv_qrels, read_csv_run, write_csv_qrels, write_csv_run
from evaluation.formats.jsonl import read_jsonl_qrels, read_jsonl_run, write_jsonl_qrels, write_jsonl_run
from evaluation.formats.lists import read_lists_run
from evaluation.formats.sources import Source, source_name
from evaluation.formats.trec import read_trec_qrels, read_trec_run, write_trec_qrels, write_trec_run
from evaluation.metrics.policies import EvaluationError, gettext_noop

# What a file holds: judgments, a run, or records (the documents and queries of a project).
Kind = Literal["qrels", "run", "records"]


@dataclass(frozen=True)
class FileFormat:
    """One format. A reader or writer left None: files of that kind are not written in it.
    The labels are marked for translation here and translated by the Django side."""

    name: str
    extensions: tuple[str, ...]  # lower case, with the dot; none: chosen explicitly only
    label: str  # the format's own name, e.g. in the documents import form
    read_qrels: Callable[..., Any] | None = None
    write_qrels: Callable[..., Any] | None = None
    read_run: Callable[..., Any] | None = None
    write_run: Callable[..., Any] | None = None
    newline: str | None = None  # how a text stream over its bytes opens ("": CSV fields may hold line ends)
    pasted: bool = False  # text pasted into the run upload form: pooling reads run files only
    records: bool = False  # documents and queries files come in it (read by annotator.documents.readers)
    qrels_name: str = ""  # the name pool files go by (their format and extension); default `name`
    qrels_label: str = ""  # judgments files, e.g. the pool export choices
    run_label: str = ""  # run files, where pooling chooses them
    run_description: str = ""  # run files, with their layout: the run upload form and stored runs

    def holds(self, kind: Kind | None) -> bool:
        if kind == "qrels":
            return self.read_qrels is not None
        if kind == "run":
            return self.read_run is not None
        if kind == "records":
            return self.records
        return True


FORMATS: dict[str, FileFormat] = {
    fmt.name: fmt
    for fmt in (
        # TREC files traditionally have no extension (qrels.test, results.test): the default.
        FileFormat(
            name="trec",
            extensions=(),
            label="TREC",
            read_qrels=read_trec_qrels,
            write_qrels=write_trec_qrels,
            read_run=read_trec_run,
            write_run=write_trec_run,
            qrels_name="qrels",
            qrels_label=gettext_noop("TREC qrels"),
            run_label=gettext_noop("TREC run"),
            run_description=gettext_noop("TREC run (qid Q0 docno rank score tag)"),
        ),
        FileFormat(
            name="csv",
            extensions=(".csv",),
            label="CSV",
            read_qrels=read_csv_qrels,
            write_qrels=write_csv_qrels,
            read_run=read_csv_run,
            write_run=write_csv_run,
            newline="",
            records=True,
            qrels_label="CSV",
            run_label="CSV",
            run_description=gettext_noop("CSV (query_id, doc_id, rank or score)"),
        ),
        FileFormat(
            name="jsonl",
            extensions=(".jsonl", ".ndjson"),
            label="JSONL",
            read_qrels=read_jsonl_qrels,
            write_qrels=write_jsonl_qrels,
            read_run=read_jsonl_run,
            write_run=write_jsonl_run,
            records=True,
            qrels_label="JSONL",
            run_label="JSONL",
            run_description=gettext_noop("JSONL (one object per line)"),
        ),
        # Pasted into the run upload form; a file of them is named as such (no extension claims it).
        FileFormat(
            name="lists",
            extensions=(),
            label=gettext_noop("Ordered IDs per query (qid: id1, id2, ...)"),
            read_run=read_lists_run,
            pasted=True,
            run_description=gettext_noop("Ordered IDs per query (qid: id1, id2, ...)"),
        ),
    )
}
DEFAULT = "trec"  # the format of a file whose extension names none


def names(kind: Kind | None = None) -> tuple[str, ...]:
    """The registry names of the formats files of `kind` come in (every format for None)."""
    return tuple(name for name, fmt in FORMATS.items() if fmt.holds(kind))


def pooled_names() -> tuple[str, ...]:
    """The run formats pooling reads candidates from (annotator.grading.pooling.read_run)."""
    return tuple(name for name in names("run") if not FORMATS[name].pasted)


def qrels_name(name: str) -> str:
    """The name pool files give a judgments format ("qrels" for TREC)."""
    return FORMATS[name].qrels_name or name


def qrels_names() -> dict[str, str]:
    """Pool files' format names -> registry names, e.g. {"qrels": "trec", "csv": "csv", ...}."""
    return {qrels_name(name): name for name in names("qrels")}


def detect_format(file_name: Source, explicit: str = "auto", *, kind: Kind | None = None) -> str:
    """The explicit format (a registry name, or a pool file's "qrels"), else the one whose
    extension the file name has (.csv -> csv, .jsonl/.ndjson -> jsonl), else TREC. "" is "auto".

    An explicit name no format of `kind` answers to raises EvaluationError naming the allowed ones.
    """
    if explicit and explicit != "auto":
        allowed = names(kind)
        chosen = qrels_names().get(explicit, explicit) if kind in ("qrels", None) else explicit
        if chosen not in allowed:
            raise EvaluationError(
                gettext_noop("unknown format %(format)r; allowed: auto, %(allowed)s"),
                {"format": explicit, "allowed": ", ".join(allowed)},
            )
        return chosen
    suffix = PurePath(source_name(file_name)).suffix.lower()
    for name, fmt in FORMATS.items():
        if suffix in fmt.extensions:
            return name
    return DEFAULT
