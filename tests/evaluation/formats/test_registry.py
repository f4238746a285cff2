"""One set of files through every path that reads them: the same name and bytes get the same format
(the registry's `detect_format`) and the same verdict from each path's own entry point."""

from __future__ import annotations

import io
from argparse import ArgumentParser
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotator.documents.readers import read_documents, read_queries
from annotator.documents.services import documents_import, queries_import
from annotator.models import Candidate, GradingSet, PoolVersion, Query
from annotator.pools.files import READER_FORMATS
from evaluation import cli, formats
from evaluation.formats import FORMATS, EvaluationError, detect_format, read_run
from evaluation.formats.registry import names, pooled_names, qrels_name, qrels_names
from evaluation.models import Run
from tests.conftest import Cast

TREC_RUN = "q1 Q0 d1 1 3.0 sys\nq1 Q0 d2 2 2.0 sys\nq2 Q0 d1 1 1.0 sys\n"
CSV_RUN = "query_id,doc_id,rank,score\nq1,d1,1,3.0\nq1,d2,2,2.0\nq2,d1,1,1.0\n"
JSONL_RUN = (
    '{"query_id": "q1", "doc_id": "d1", "score": 3.0}\n'
    '{"query_id": "q1", "doc_id": "d2", "score": 2.0}\n'
    '{"query_id": "q2", "doc_id": "d1", "score": 1.0}\n'
)
TREC_QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n"
CSV_QRELS = "query_id,doc_id,grade\nq1,d1,2\nq1,d2,0\nq2,d1,1\n"
JSONL_QRELS = (
    '{"query_id": "q1", "doc_id": "d1", "grade": 2}\n'
    '{"query_id": "q1", "doc_id": "d2", "grade": 0}\n'
    '{"query_id": "q2", "doc_id": "d1", "grade": 1}\n'
)
CSV_QUERIES = "query_id,text\nq7,refund\n"
JSONL_QUERIES = '{"query_id": "q7", "text": "refund"}\n'

# name -> (bytes, the format every path reads it as, whether every path accepts it)
RUN_FILES = {
    "run.txt": (TREC_RUN, "trec", True),
    "x.tsv": (TREC_RUN.replace(" ", "\t"), "trec", True),
    "run.csv": (CSV_RUN, "csv", True),
    "run.jsonl": (JSONL_RUN, "jsonl", True),
    "run.ndjson": (JSONL_RUN, "jsonl", True),
    # No format claims .json: read as TREC, whose lines these are not. (Pooling alone read it as
    # JSONL; the extensions every page and manual names are .jsonl and .ndjson.)
    "run.json": (JSONL_RUN, "trec", False),
    "trec.csv": (TREC_RUN, "csv", False),  # the name decides, not the bytes
}
QRELS_FILES = {
    "qrels": (TREC_QRELS, "trec", True),
    "x.tsv": (TREC_QRELS.replace(" ", "\t"), "trec", True),
    "qrels.csv": (CSV_QRELS, "csv", True),
    "qrels.jsonl": (JSONL_QRELS, "jsonl", True),
    "qrels.json": (JSONL_QRELS, "trec", False),
}
QUERY_FILES = {
    "queries.csv": (CSV_QUERIES, "csv", True),
    "queries.jsonl": (JSONL_QUERIES, "jsonl", True),
    "queries.ndjson": (JSONL_QUERIES, "jsonl", True),
    "queries.json": (JSONL_QUERIES, "trec", False),  # not a format of documents and queries
    "queries.txt": (CSV_QUERIES, "trec", False),
}


@pytest.fixture
def project(cast: Cast) -> Cast:
    """Alpha with the documents and queries the runs name, so pooling can take their pairs."""
    documents_import(project=cast.alpha, records=read_documents(b"doc_id,body\nd1,One\nd2,Two\n", "csv"))
    queries_import(project=cast.alpha, records=read_queries(b"query_id,text\nq1,one\nq2,two\n", "csv"))
    return cast


def written(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / name.replace(".", "_")  # x.tsv is both a run and a qrels file
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def evaluate_options(*args: str) -> dict[str, Any]:
    parser = ArgumentParser()
    cli.add_arguments(parser)
    return vars(parser.parse_args(args))


def evaluate(qrels: Path, run: Path) -> bool:
    """`manage.py evaluate QRELS RUN`, as its shell entry point parses and reports it."""
    try:
        cli.report(evaluate_options(str(qrels), str(run)))
    except EvaluationError:
        return False
    return True


# ---- Runs: evaluate, the run upload page, pooling on the Imports page and import_candidates --------


def run_by_evaluate(cast: Cast, client: Client, path: Path) -> tuple[str | None, bool]:
    qrels = written(path.parent, "qrels", TREC_QRELS)
    return None, evaluate(qrels, path)


def run_by_upload_page(cast: Cast, client: Client, path: Path) -> tuple[str | None, bool]:
    client.force_login(cast.reviewer)
    data = {
        "name": "upload",
        "format": "auto",
        "file": SimpleUploadedFile(path.name, path.read_bytes()),
        "k": 10,
        "unjudged": "error",
        "ties": "error",
        "missing_queries": "zero",
        "extra_queries": "error",
    }
    client.post(reverse("run_upload", kwargs={"slug": "alpha"}), data)
    run = Run.objects.filter(project=cast.alpha, name="upload").first()
    return (run.format if run else None), run is not None


def run_by_pooling_page(cast: Cast, client: Client, path: Path) -> tuple[str | None, bool]:
    grading_set = GradingSet.objects.create(project=cast.alpha, name="Page")
    client.force_login(cast.owner)
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    client.post(
        reverse("import_candidates", kwargs={"slug": "alpha"}),
        {"grading_set": grading_set.pk, "files": [upload], "format": "", "depth": ""},
    )
    return None, Candidate.objects.filter(grading_set=grading_set).exists()


def run_by_import_candidates(cast: Cast, client: Client, path: Path) -> tuple[str | None, bool]:
    err = io.StringIO()
    try:
        call_command(
            "import_candidates", "alpha", "Command", str(path), "--create", stdout=io.StringIO(), stderr=err
        )
    except CommandError:
        return None, False
    said = err.getvalue()  # "PATH: N ranked lines (FORMAT)."
    return said[said.rindex("(") + 1 : said.rindex(")")], True


RUN_PATHS: dict[str, Callable[[Cast, Client, Path], tuple[str | None, bool]]] = {
    "evaluate": run_by_evaluate,
    "run upload page": run_by_upload_page,
    "pooling page": run_by_pooling_page,
    "import_candidates": run_by_import_candidates,
}


@pytest.mark.parametrize("path_name", RUN_PATHS)
@pytest.mark.parametrize("file_name", RUN_FILES)
def test_a_run_file_gets_one_format_and_one_verdict_on_every_path(
    project: Cast, client: Client, tmp_path: Path, file_name: str, path_name: str
) -> None:
    text, fmt, accepted = RUN_FILES[file_name]
    assert detect_format(file_name, kind="run") == fmt
    shown, verdict = RUN_PATHS[path_name](project, client, written(tmp_path, file_name, text))
    assert verdict is accepted
    if verdict and shown is not None:
        assert shown == fmt


# Pooling's two documented leniencies (the Imports help page): ranks need only be unique per query,
# and a plain list of pairs (neither score nor rank) is read in file order. Comparing refuses both.
POOLING_ONLY = {
    "gaps.csv": "query_id,doc_id,rank\nq1,d1,1\nq1,d2,3\nq2,d1,5\n",
    "pairs.csv": "query_id,doc_id\nq1,d1\nq1,d2\nq2,d1\n",
    "pairs.jsonl": '{"query_id": "q1", "doc_id": "d1"}\n{"query_id": "q2", "doc_id": "d1"}\n',
}


@pytest.mark.parametrize("path_name", RUN_PATHS)
@pytest.mark.parametrize("file_name", POOLING_ONLY)
def test_only_pooling_takes_rank_gaps_and_plain_pair_lists(
    project: Cast, client: Client, tmp_path: Path, file_name: str, path_name: str
) -> None:
    path = written(tmp_path, file_name, POOLING_ONLY[file_name])
    _shown, verdict = RUN_PATHS[path_name](project, client, path)
    assert verdict is (path_name in ("pooling page", "import_candidates"))


@pytest.mark.parametrize("path_name", ["pooling page", "import_candidates"])
def test_pooling_reads_runs_with_the_one_run_reader(
    project: Cast, client: Client, tmp_path: Path, path_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    purposes: list[str] = []

    def recording(*args: Any, **kwargs: Any) -> Any:
        purposes.append(kwargs.get("purpose", "compare"))
        return read_run(*args, **kwargs)

    monkeypatch.setattr(formats, "read_run", recording)
    _shown, verdict = RUN_PATHS[path_name](project, client, written(tmp_path, "run.csv", CSV_RUN))
    assert verdict and purposes == ["pooling"]


# The cases where the pooling reader once had rules of its own; both paths now give one verdict.
# name -> (bytes, accepted). Accepted files give the same rankings on both paths.
ONE_VERDICT = {
    "unknown-column.csv": ("query_id,doc_id,rank,note\nq1,d1,1,x\nq1,d2,2,y\n", True),
    "header-case.csv": ("Query_ID,Doc_ID,Rank\nq1,d2,2\nq1,d1,1\n", True),
    "plus-rank.csv": ("query_id,doc_id,rank\nq1,d1,+1\nq1,d2,+2\n", False),
    "wide-digit-rank.csv": ("query_id,doc_id,rank\nq1,d1,\uff11\n", False),
    "string-score.jsonl": ('{"query_id": "q1", "doc_id": "d1", "score": "2.5"}\n', False),
    "string-rank.jsonl": ('{"query_id": "q1", "doc_id": "d1", "rank": "1"}\n', False),
    "null-score.jsonl": ('{"query_id": "q1", "doc_id": "d1", "score": null}\n', False),
    "longest-id.run": (f"q1 Q0 {'d' * 255} 1 2.0 sys\n", True),
    "empty-score.csv": ("query_id,doc_id,rank,score\nq1,d1,1,\nq1,d2,2,\n", False),
    "empty-rank.csv": ("query_id,doc_id,rank\nq1,d1,\n", False),
    "rank-beside-score.csv": ("query_id,doc_id,rank,score\nq1,d1,first,2.0\nq1,d2,x,1.0\n", True),
}


@pytest.mark.parametrize("file_name", ONE_VERDICT)
def test_pooling_and_comparing_give_a_run_file_one_verdict(file_name: str) -> None:
    from annotator.documents.readers import ImportFileError
    from annotator.grading.pooling import read_run as read_pooled_run

    text, accepted = ONE_VERDICT[file_name]
    fmt = detect_format(file_name, kind="run")
    stream = io.StringIO(text)
    stream.name = file_name  # type: ignore[misc]
    try:
        compared = read_run(stream, format=fmt)
    except EvaluationError:
        compared = None
    try:
        pooled = read_pooled_run(text.encode(), fmt, file_name)
    except ImportFileError:
        pooled = None
    assert (compared is not None, pooled is not None) == (accepted, accepted)
    if compared is not None and pooled is not None:
        rankings = [[run.ranking(q) for q in run.query_ids] for run in (compared, pooled)]
        assert rankings[0] == rankings[1]


# IDs longer than the app's columns hold: a candidate must be stored, a compared run's document is
# merely one that no pool judges.
LONG_IDS = {
    "long-doc.csv": f"query_id,doc_id,rank\nq1,{'d' * 256},1\n",
    "long-doc.run": f"q1 Q0 {'d' * 256} 1 2.0 sys\n",
    "long-query.run": f"{'q' * 256} Q0 d1 1 2.0 sys\n",
    "long-doc.jsonl": f'{{"query_id": "q1", "doc_id": "{"d" * 256}", "score": 1.0}}\n',
}


@pytest.mark.parametrize("file_name", LONG_IDS)
def test_pooling_refuses_an_id_longer_than_a_candidate_holds_and_comparing_reads_it(
    file_name: str,
) -> None:
    from annotator.documents.readers import ImportFileError
    from annotator.grading.pooling import read_run as read_pooled_run

    text, fmt = LONG_IDS[file_name], detect_format(file_name, kind="run")
    assert read_run(io.StringIO(text), format=fmt).query_ids  # the engine's, as `evaluate` reads it
    with pytest.raises(ImportFileError, match="longer than 255 characters"):
        read_pooled_run(text.encode(), fmt, file_name)
    just_fits = text.replace("d" * 256, "d" * 255).replace("q" * 256, "q" * 255)
    assert read_pooled_run(just_fits.encode(), fmt, file_name).query_ids


def test_the_pooling_leniencies_are_named_options_of_the_one_reader() -> None:
    for name, text in POOLING_ONLY.items():
        with pytest.raises(EvaluationError):
            read_run(io.StringIO(text), format=detect_format(name, kind="run"))
        run = read_run(io.StringIO(text), format=detect_format(name, kind="run"), purpose="pooling")
        assert run.ranking("q1")[0] == "d1" and not run.has_scores


# ---- Judgments: evaluate, the pool import page and import_pool -------------------------------------


def qrels_by_evaluate(cast: Cast, client: Client, path: Path) -> tuple[str | None, bool]:
    return None, evaluate(path, written(path.parent, "run.txt", TREC_RUN))


def qrels_by_pool_import_page(cast: Cast, client: Client, path: Path) -> tuple[str | None, bool]:
    client.force_login(cast.owner)
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {"file": upload, "format": "auto", "pool_name": "Page", "grade_map": ""},
    )
    return None, PoolVersion.objects.filter(pool__name="Page").exists()


def qrels_by_import_pool(cast: Cast, client: Client, path: Path) -> tuple[str | None, bool]:
    try:
        by = cast.owner.username
        call_command("import_pool", "alpha", str(path), "--pool", "Command", "--by", by, stdout=io.StringIO())
    except CommandError:
        return None, False
    return None, True


QRELS_PATHS: dict[str, Callable[[Cast, Client, Path], tuple[str | None, bool]]] = {
    "evaluate": qrels_by_evaluate,
    "pool import page": qrels_by_pool_import_page,
    "import_pool": qrels_by_import_pool,
}


@pytest.mark.parametrize("path_name", QRELS_PATHS)
@pytest.mark.parametrize("file_name", QRELS_FILES)
def test_a_judgments_file_gets_one_format_and_one_verdict_on_every_path(
    project: Cast, client: Client, tmp_path: Path, file_name: str, path_name: str
) -> None:
    text, fmt, accepted = QRELS_FILES[file_name]
    assert detect_format(file_name, kind="qrels") == fmt
    assert READER_FORMATS[qrels_name(fmt)] == fmt  # pool files call TREC judgments "qrels"
    _shown, verdict = QRELS_PATHS[path_name](project, client, written(tmp_path, file_name, text))
    assert verdict is accepted


# ---- Documents and queries: the Imports page and import_queries ------------------------------------


def queries_by_import_page(cast: Cast, client: Client, path: Path) -> bool:
    client.force_login(cast.owner)
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    client.post(reverse("import_queries", kwargs={"slug": "alpha"}), {"file": upload, "format": ""})
    return Query.objects.filter(project=cast.alpha, external_id="q7").exists()


def queries_by_import_queries(cast: Cast, client: Client, path: Path) -> bool:
    try:
        call_command("import_queries", "alpha", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    except CommandError:
        return False
    return True


@pytest.mark.parametrize("entry", [queries_by_import_page, queries_by_import_queries])
@pytest.mark.parametrize("file_name", QUERY_FILES)
def test_a_queries_file_gets_one_format_and_one_verdict_on_every_path(
    project: Cast, client: Client, tmp_path: Path, file_name: str, entry: Callable[[Cast, Client, Path], bool]
) -> None:
    text, fmt, accepted = QUERY_FILES[file_name]
    assert detect_format(file_name, kind="records") == fmt
    assert FORMATS[fmt].records is accepted
    assert entry(project, client, written(tmp_path, file_name, text)) is accepted


# ---- The registry itself ---------------------------------------------------------------------------


def test_every_list_of_format_names_comes_from_the_registry() -> None:
    from annotator.documents.forms import FORMAT_CHOICES
    from annotator.grading.forms import RUN_FORMAT_CHOICES
    from annotator.pools.files import EXPORT_FORMATS
    from evaluation.models import RunFormat

    assert [value for value, _label in FORMAT_CHOICES[1:]] == list(names("records")) == ["csv", "jsonl"]
    pooled = [value for value, _label in RUN_FORMAT_CHOICES[1:]]
    assert pooled == list(pooled_names()) == ["trec", "csv", "jsonl"]
    assert list(EXPORT_FORMATS) == list(READER_FORMATS) == list(qrels_names()) == ["qrels", "csv", "jsonl"]
    assert RunFormat.values == list(names("run")) == ["trec", "csv", "jsonl", "lists"]
    assert cli.QRELS_FORMATS == ("auto", "trec", "csv", "jsonl")
    assert cli.RUN_FORMATS == ("auto", "trec", "csv", "jsonl", "lists")


def test_pool_file_names_and_the_cli_names_are_accepted_explicitly() -> None:
    assert detect_format("judgments.csv", "qrels", kind="qrels") == "trec"
    assert detect_format("x", "", kind="run") == "trec"  # "" is auto, as the pooling forms send it
    with pytest.raises(EvaluationError, match="unknown format 'lists'; allowed: auto, trec, csv, jsonl$"):
        detect_format("x", "lists", kind="qrels")
    with pytest.raises(EvaluationError, match="unknown format 'trec'; allowed: auto, csv, jsonl$"):
        detect_format("x", "trec", kind="records")


def test_evaluate_reads_a_file_of_pasted_lists(tmp_path: Path) -> None:
    path = written(tmp_path, "lists.txt", "q1: d1, d2\nq2: d1\n")
    run = read_run(path, format="lists")
    assert run.name == "lists.txt" and run.ranking("q1") == ("d1", "d2") and not run.has_scores
    qrels = written(tmp_path, "qrels", TREC_QRELS)
    assert "ndcg_cut_10" in cli.report(evaluate_options(str(qrels), str(path), "--run-format", "lists"))
    invisible = written(tmp_path, "invisible.txt", "q1: d1, d\u200b2\n")
    with pytest.raises(EvaluationError, match="document ID 'd\\\\u200b2' contains the character U\\+200B"):
        read_run(invisible, format="lists")  # the one ID rule of the file readers
