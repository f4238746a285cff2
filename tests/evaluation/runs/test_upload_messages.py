"""Run and pool uploads: a line that is not JSON is named in one translated sentence, and a run
whose rank and score disagree is ordered by score with a warning."""

from __future__ import annotations

import html
import io
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotator.pools.services import PoolImportError
from annotator.web.errors import describe_error
from evaluation import formats
from evaluation.formats import rows
from evaluation.metrics import EvaluationError
from evaluation.models import Run
from tests.annotator.pools.test_exports_imports import import_text
from tests.conftest import Cast

ROOT = Path(__file__).resolve().parents[3]
# The imports' sentence (annotator/documents/readers.py), whose translation exists already.
JSON_SYNTAX_PROBLEM = "not valid JSON (the problem is at column %(column)d)."
CHECK = {"k": 10, "unjudged": "error", "ties": "error", "missing_queries": "zero", "extra_queries": "error"}


def _stream(text: str, name: str) -> io.StringIO:
    stream = io.StringIO(text)
    stream.name = name
    return stream


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


# ---- 1. A line that is not JSON -----------------------------------------------------------------


def test_a_jsonl_line_that_is_not_json_is_named_by_its_column_not_by_pythons_words() -> None:
    with pytest.raises(EvaluationError) as caught:
        formats.read_run(
            _stream('{"query_id": "q1", "doc_id": "A", "score": 1}\nnot json\n', "badjson.jsonl")
        )
    error = caught.value
    assert str(error) == "badjson.jsonl, line 2: not valid JSON (the problem is at column 1)."
    assert error.template == rows.JSON_SYNTAX_PROBLEM == JSON_SYNTAX_PROBLEM and "Expecting" not in str(error)
    with translation.override("zh-hans"):
        chinese = describe_error(error)
    assert chinese == "文件 badjson.jsonl，第 2 行：不是有效的 JSON（问题在第 1 列）。"


def test_the_json_message_is_the_one_the_document_imports_already_translate() -> None:
    """One sentence, so one translation: the document and query imports use the same constant."""
    from annotator.documents.readers import ImportFileError, read_documents

    with pytest.raises(ImportFileError) as caught:
        read_documents('{"doc_id": "A", "body": "x"}\n{bad\n', "jsonl")
    assert JSON_SYNTAX_PROBLEM % {"column": 2} in str(caught.value)
    with translation.override("zh-hans"):
        assert translation.gettext(JSON_SYNTAX_PROBLEM) != JSON_SYNTAX_PROBLEM


def test_a_pool_import_with_a_line_that_is_not_json_is_refused_in_chinese(cast: Cast) -> None:
    with translation.override("zh-hans"), pytest.raises(PoolImportError) as refused:
        import_text(
            cast, '{"query_id": "q1", "doc_id": "A", "grade": 1}\n{query_id: "q1"}\n', "jsonl", name="p.jsonl"
        )
    message = str(refused.value)
    assert "第 2 行" in message and "不是有效的 JSON（问题在第 2 列）" in message
    assert "Expecting" not in message and "无效的 JSON" not in message


def test_a_run_upload_with_a_line_that_is_not_json_reads_all_chinese(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    data = b'{"query_id": "q1", "doc_id": "A", "score": 1}\nnot json\n'
    response = client.post(
        reverse("run_upload", kwargs={"slug": "alpha"}),
        {"name": "bad", "format": "auto", "file": SimpleUploadedFile("badjson.jsonl", data), **CHECK},
    )
    page = html.unescape(response.content.decode())
    assert "文件 badjson.jsonl，第 2 行：不是有效的 JSON（问题在第 1 列）。" in page
    assert "Expecting" not in page


# ---- 2. The command in the summary row ----------------------------------------------------------


# ---- 3. Mean gains under ties="expected" ---------------------------------------------------------


# ---- 4. No "only in" tags beside a refused run ---------------------------------------------------


# ---- 5. Rank and score together -----------------------------------------------------------------

DISAGREEING_CSV = "query_id,doc_id,rank,score\nq1,A,1,9\nq1,B,2,8\nq2,C,1,1\nq2,D,2,5\nq3,E,1,2\nq3,F,2,3\n"
DISAGREEING_JSONL = (
    '{"query_id": "q1", "doc_id": "A", "rank": 1, "score": 9}\n'
    '{"query_id": "q2", "doc_id": "C", "rank": 1, "score": 1}\n'
    '{"query_id": "q2", "doc_id": "D", "rank": 2, "score": 5}\n'
)


@pytest.mark.parametrize(
    ("name", "text", "line"), [("r.csv", DISAGREEING_CSV, 5), ("r.jsonl", DISAGREEING_JSONL, 3)]
)
def test_a_run_whose_ranks_disagree_with_its_scores_is_ordered_by_score_with_a_warning(
    name: str, text: str, line: int
) -> None:
    run = formats.read_run(_stream(text, name))
    assert run.ranking("q2") == ("C", "D")  # input order; the score orders it when scored
    assert run.has_scores
    [warning] = run.warnings  # the first query only (q3 disagrees too in the CSV)
    assert (warning.query, warning.doc_id, warning.source, warning.line) == ("q2", "D", name, line)
    assert str(warning) == (
        f"{name}, line {line}: query 'q2': the rank and score columns order the documents differently "
        "(document 'D' has rank 2 but a higher score than 'C' at rank 1); the run is ordered by score "
        "and the rank is not read, as trec_eval does"
    )


@pytest.mark.parametrize(
    "text",
    [
        # equal scores: the rank may break the tie
        "query_id,doc_id,rank,score\nq1,A,1,9\nq1,B,2,8\nq1,C,3,8\n",
        "query_id,doc_id,score\nq1,A,1\nq1,B,2\n",  # no rank
        "query_id,doc_id,rank\nq1,A,2\nq1,B,1\n",  # no score
        "query_id,doc_id,rank,score\nq1,A,x,1\nq1,B,1,2\n",  # a rank that is not one is not read, as before
        "query_id,doc_id,rank,score\nq1,A,,1\nq1,B,,2\n",
    ],
)
def test_no_warning_when_rank_and_score_agree_or_one_is_missing(text: str) -> None:
    assert formats.read_run(_stream(text, "r.csv")).warnings == ()


def test_the_upload_page_shows_the_warning_and_says_the_rule(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    url = reverse("run_upload", kwargs={"slug": "alpha"})
    form = _text(client.get(url).content.decode())
    assert "with both, the score orders and the rank is not read (as trec_eval)" in form
    response = client.post(
        url,
        {
            "name": "both",
            "format": "auto",
            "file": SimpleUploadedFile("both.csv", DISAGREEING_CSV.encode()),
            **CHECK,
        },
        follow=True,
    )
    run = Run.objects.get(name="both")
    page = _text(response.content.decode())
    assert "Run “both” uploaded" in page
    assert (
        "file both.csv, line 5: query “q2”: the rank and score columns order the documents differently "
        "(document “D” has rank 2 but a higher score than “C” at rank 1)"
    ) in page
    assert run.has_scores
    # Agreeing ranks: no warning.
    response = client.post(
        url,
        {
            "name": "fine",
            "format": "auto",
            "file": SimpleUploadedFile("fine.csv", b"query_id,doc_id,rank,score\nq1,A,1,2\nq1,B,2,1\n"),
            **CHECK,
        },
        follow=True,
    )
    assert "order the documents differently" not in _text(response.content.decode())


def test_the_engine_manual_format_table_says_the_rank_and_score_rule() -> None:
    readme = (ROOT / "evaluation" / "README.md").read_text(encoding="utf-8")
    rows = [
        line for line in readme.splitlines() if line.startswith(("| CSV (header row", "| JSONL (one object"))
    ]
    assert len(rows) == 2
    for row in rows:
        assert "with both, the score orders and the rank is not read (as trec_eval)" in row


# ---- 6. Percentages ------------------------------------------------------------------------------
