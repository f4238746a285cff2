"""The one number rule (evaluation/formats/values.py, evaluation/README.md "Numbers") on every path
that reads files: `evaluate`, the run upload page, pooling (the Imports page and import_candidates),
and pool imports (the page and import_pool). Each refuses the same values with the same message,
naming the line, the value and what to write instead."""

from __future__ import annotations

import html
import io
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotator.documents.readers import read_documents, read_queries
from annotator.documents.services import documents_import, queries_import
from annotator.models import Candidate, GradingSet, PoolVersion
from evaluation import formats
from evaluation.formats import EvaluationError
from evaluation.models import Run
from tests.conftest import Cast
from tests.evaluation.formats.test_registry import (
    TREC_QRELS,
    TREC_RUN,
    evaluate_options,
    written,
)


@pytest.fixture
def project(cast: Cast) -> Cast:
    """Alpha with the documents and queries the runs name, so pooling could take their pairs."""
    documents_import(project=cast.alpha, records=read_documents(b"doc_id,body\nd1,One\nd2,Two\n", "csv"))
    queries_import(project=cast.alpha, records=read_queries(b"query_id,text\nq1,one\n", "csv"))
    return cast


# file name -> (bytes, the line refused, what every path says about it)
RUNS = {
    "arabic-rank.csv": (
        "query_id,doc_id,rank\nq1,d1,1\nq1,d2,\u0663\n",
        3,
        "rank '\u0663' is not written plainly; write 3",
    ),
    "plus-rank.csv": ("query_id,doc_id,rank\nq1,d1,+2\n", 2, "rank '+2' is not written plainly; write 2"),
    "zero-rank.csv": ("query_id,doc_id,rank\nq1,d1,02\n", 2, "rank '02' is not written plainly; write 2"),
    "plus-score.csv": ("query_id,doc_id,score\nq1,d1,+2\n", 2, "score '+2' starts with '+'; write 2"),
    "plus-score.trec": ("q1 Q0 d1 1 2.5 s\nq1 Q0 d2 2 +2 s\n", 2, "score '+2' starts with '+'; write 2"),
    "string-score.jsonl": (
        '{"query_id": "q1", "doc_id": "d1", "score": "2"}\n',
        1,
        'score must be a finite number, got "2"',
    ),
    "null-score.jsonl": (
        '{"query_id": "q1", "doc_id": "d1", "score": null}\n',
        1,
        "score must be a finite number, got null",
    ),
}
QRELS = {
    "plus.qrels": ("q1 0 d1 1\nq1 0 d2 +2\n", 2, "grade '+2' is not written plainly; write 2"),
    "zero.qrels": ("q1 0 d1 02\n", 1, "grade '02' is not written plainly; write 2"),
    "arabic.csv": (
        "query_id,doc_id,grade\nq1,d1,\u0663\n",
        2,
        "grade '\u0663' is not written plainly; write 3",
    ),
    "plus.csv": ("query_id,doc_id,grade\nq1,d1,+2\n", 2, "grade '+2' is not written plainly; write 2"),
    "string.jsonl": (
        '{"query_id": "q1", "doc_id": "d1", "grade": "2"}\n',
        1,
        'grade must be a JSON integer 0..3, got "2"',
    ),
}


def said(text: str) -> str:
    """A message as a page or a command shows it, with the pages' quotes read as the engine's."""
    return html.unescape(text).replace("\u201c", "'").replace("\u201d", "'").lower()


def run_by_evaluate(cast: Cast, client: Client, path: Path) -> str:
    from evaluation import cli

    qrels = written(path.parent, "qrels", TREC_QRELS)
    with pytest.raises(EvaluationError) as refused:
        cli.report(evaluate_options(str(qrels), str(path)))
    return str(refused.value)


def run_by_upload_page(cast: Cast, client: Client, path: Path) -> str:
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
    response = client.post(reverse("run_upload", kwargs={"slug": "alpha"}), data, follow=True)
    assert not Run.objects.filter(name="upload").exists()
    return response.content.decode()


def run_by_pooling_page(cast: Cast, client: Client, path: Path) -> str:
    grading_set = GradingSet.objects.create(project=cast.alpha, name="Page")
    client.force_login(cast.owner)
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    response = client.post(
        reverse("import_candidates", kwargs={"slug": "alpha"}),
        {"grading_set": grading_set.pk, "files": [upload], "format": "", "depth": ""},
        follow=True,
    )
    assert not Candidate.objects.filter(grading_set=grading_set).exists()
    return response.content.decode()


def run_by_import_candidates(cast: Cast, client: Client, path: Path) -> str:
    with pytest.raises(CommandError) as refused:
        call_command(
            "import_candidates",
            "alpha",
            "Command",
            str(path),
            "--create",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    return str(refused.value)


def qrels_by_evaluate(cast: Cast, client: Client, path: Path) -> str:
    from evaluation import cli

    with pytest.raises(EvaluationError) as refused:
        cli.report(evaluate_options(str(path), str(written(path.parent, "run.txt", TREC_RUN))))
    return str(refused.value)


def qrels_by_pool_import_page(cast: Cast, client: Client, path: Path) -> str:
    client.force_login(cast.owner)
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    response = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {"file": upload, "format": "auto", "pool_name": "Page", "grade_map": ""},
        follow=True,
    )
    assert not PoolVersion.objects.filter(pool__name="Page").exists()
    return response.content.decode()


def qrels_by_import_pool(cast: Cast, client: Client, path: Path) -> str:
    with pytest.raises(CommandError) as refused:
        by = cast.owner.username
        call_command("import_pool", "alpha", str(path), "--pool", "Command", "--by", by, stdout=io.StringIO())
    return str(refused.value)


RUN_PATHS: dict[str, Callable[[Cast, Client, Path], str]] = {
    "evaluate": run_by_evaluate,
    "run upload page": run_by_upload_page,
    "pooling page": run_by_pooling_page,
    "import_candidates": run_by_import_candidates,
}
QRELS_PATHS: dict[str, Callable[[Cast, Client, Path], str]] = {
    "evaluate": qrels_by_evaluate,
    "pool import page": qrels_by_pool_import_page,
    "import_pool": qrels_by_import_pool,
}


@pytest.mark.parametrize("path_name", RUN_PATHS)
@pytest.mark.parametrize("file_name", RUNS)
def test_every_run_path_refuses_a_number_against_the_rule_by_line(
    project: Cast, client: Client, tmp_path: Path, file_name: str, path_name: str
) -> None:
    text, line, message = RUNS[file_name]
    shown = said(RUN_PATHS[path_name](project, client, written(tmp_path, file_name, text)))
    assert message.lower() in shown
    assert f"line {line}:" in shown


@pytest.mark.parametrize("path_name", QRELS_PATHS)
@pytest.mark.parametrize("file_name", QRELS)
def test_every_judgments_path_refuses_a_grade_against_the_rule_by_line(
    project: Cast, client: Client, tmp_path: Path, file_name: str, path_name: str
) -> None:
    text, line, message = QRELS[file_name]
    shown = said(QRELS_PATHS[path_name](project, client, written(tmp_path, file_name, text)))
    assert message.lower() in shown
    assert f"line {line}:" in shown


@pytest.mark.parametrize(
    ("token", "value"),
    [("0", 0.0), ("-0.5", -0.5), ("12.5", 12.5), ("1e+20", 1e20), ("-3e-2", -0.03), (".5", 0.5)],
)
def test_scores_in_plain_decimal_notation_are_read_in_every_format(token: str, value: float) -> None:
    for name, text in (
        ("r.trec", f"q1 Q0 d1 1 {token} s\n"),
        ("r.csv", f"query_id,doc_id,score\nq1,d1,{token}\n"),
        (
            "r.jsonl",
            f'{{"query_id": "q1", "doc_id": "d1", "score": {token if token[0] != "." else "0" + token}}}\n',
        ),
    ):
        stream = io.StringIO(text)
        stream.name = name  # type: ignore[misc]
        scores = formats.read_run(stream).scores_of("q1")
        assert scores is not None and float(scores[0]) == value, name


@pytest.mark.parametrize(("token", "rank"), [("1", 1), ("10", 10), ("987", 987)])
def test_ranks_written_plainly_are_read(token: str, rank: int) -> None:
    stream = io.StringIO(f"query_id,doc_id,rank\nq1,later,{rank + 1}\nq1,first,{token}\n")
    stream.name = "r.csv"  # type: ignore[misc]
    assert list(formats.read_run(stream, purpose="pooling").ranking("q1")) == ["first", "later"]


def test_a_negative_grade_written_plainly_is_read_for_the_grade_map_to_map() -> None:
    stream = io.StringIO("q1 0 d1 -1\nq1 0 d2 0\nq1 0 d3 10\n")
    stream.name = "qrels"  # type: ignore[misc]
    pool = formats.read_qrels(stream, grade_map={-1: 0, 10: 3})
    assert dict(pool["q1"]) == {"d1": 0, "d2": 0, "d3": 3}


@pytest.mark.parametrize("entry", ["+4:3", "04:3", "4:+3"])
def test_a_grade_map_entry_follows_the_same_rule(entry: str) -> None:
    with pytest.raises(EvaluationError, match="is not FROM:TO with integers"):
        formats.parse_grade_map(entry)
