"""Input Python reads badly: numbers longer than it converts (int() refuses over 4,300 digits
with a bare ValueError), JSON nested past the recursion limit, and JSON text that is not Unicode
(lone surrogates) or that PostgreSQL refuses (NUL). Every reader names the line, so none is a 500
on the web forms."""

from __future__ import annotations

import io

import pytest

from annotator.documents.readers import ImportFileError, read_documents, read_queries
from annotator.grading.pooling import read_run
from evaluation.formats import read_qrels
from evaluation.formats import read_run as read_engine_run
from evaluation.formats.values import MAX_DIGITS, parse_grade_map
from evaluation.metrics.policies import EvaluationError

HUGE = "9" * 5000


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        (
            "trec",
            f"q1 0 A 1\nq1 0 B {HUGE}\n",
            f"line 2: query 'q1', document 'B': grade has more than {MAX_DIGITS} digits; grades are integers "
            "0..3",
        ),
        (
            "csv",
            f"query_id,doc_id,grade\nq1,A,1\nq1,B,-{HUGE}\n",
            f"line 3: query 'q1', document 'B': grade has more than {MAX_DIGITS} digits",
        ),
        (
            "jsonl",
            f'{{"query_id": "q1", "doc_id": "A", "grade": {HUGE}}}\n',
            f"line 1: a number on this line has more than {MAX_DIGITS} digits",
        ),
    ],
)
def test_a_grade_too_long_to_convert_is_refused_on_its_line(fmt: str, text: str, message: str) -> None:
    with pytest.raises(EvaluationError) as refused:
        read_qrels(io.StringIO(text), format=fmt)
    assert message in str(refused.value)


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        ("trec", f"q1 Q0 A {HUGE} 1.5 sys\n", None),  # trec_eval ignores the rank column: accepted
        (
            "csv",
            f"query_id,doc_id,rank\nq1,A,{HUGE}\n",
            f"line 2: query 'q1', document 'A': rank has more than {MAX_DIGITS} digits",
        ),
        (
            "jsonl",
            f'{{"query_id": "q1", "doc_id": "A", "rank": {HUGE}}}\n',
            f"line 1: a number on this line has more than {MAX_DIGITS} digits",
        ),
    ],
)
def test_a_rank_too_long_to_convert_is_refused_on_its_line(fmt: str, text: str, message: str | None) -> None:
    if message is None:
        assert read_engine_run(io.StringIO(text), format=fmt).ranking("q1") == ("A",)
        return
    with pytest.raises(EvaluationError) as refused:
        read_engine_run(io.StringIO(text), format=fmt)
    assert message in str(refused.value)


def test_a_grade_map_with_a_huge_number_is_refused() -> None:
    # A huge FROM kept as 10**MAX_DIGITS is harmless for reading, but the settings recorded with
    # the result would show a map nobody typed: both sides are refused.
    for text in (f"1:{HUGE}", f"{HUGE}:3"):
        with pytest.raises(EvaluationError, match=f"has a number with more than {MAX_DIGITS} digits"):
            parse_grade_map(text)


@pytest.mark.parametrize(
    "read",
    [
        lambda data: read_documents(data, "jsonl"),
        lambda data: read_queries(data, "jsonl"),
        lambda data: read_run(data, "jsonl", "run"),
    ],
    ids=["documents", "queries", "candidates"],
)
def test_the_grading_importers_name_the_line_of_a_number_too_long(read: object) -> None:
    data = f'{{"doc_id": "d1", "query_id": "q1", "text": "t", "body": "x", "title": {HUGE}}}\n'.encode()
    with pytest.raises(ImportFileError) as refused:
        read(data)  # type: ignore[operator]
    # The imports end their sentences with a period, the engine (candidates) does not.
    assert f"Line 1: a number on this line has more than {MAX_DIGITS} digits" in str(refused.value)


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "the JSON on this line is nested too deeply"),
        ('{"query_id": "q1", "doc_id": "A\\ud800", "grade": 1}', "holds an unpaired surrogate escape"),
        ('{"query_id": "q1\\udfff", "doc_id": "A", "grade": 1}', "holds an unpaired surrogate escape"),
        ('{"query_id": "q1", "doc_id": "A\\u0000", "grade": 1}', "holds a NUL character"),
    ],
    ids=["deep", "surrogate-value", "surrogate-key-value", "nul"],
)
def test_json_lines_no_reader_may_take_are_refused_on_their_line(line: str, problem: str) -> None:
    """A RecursionError, and text that cannot be stored (lone surrogates; NUL on PostgreSQL), are
    refusals on their line, not 500s on the JSONL upload forms."""
    text = '{"query_id": "q0", "doc_id": "Z", "grade": 0}\n' + line + "\n"
    with pytest.raises(EvaluationError) as refused:
        read_qrels(io.StringIO(text), format="jsonl")
    assert "line 2: " in str(refused.value) and problem in str(refused.value)
    data = ('{"doc_id": "Z", "body": "x"}\n' + line.replace('"grade": 1', '"body": "x"') + "\n").encode()
    with pytest.raises(ImportFileError) as not_imported:
        read_documents(data, "jsonl")
    assert str(not_imported.value).startswith("Line 2: ") and problem in str(not_imported.value)


def test_a_surrogate_pair_escape_is_one_ordinary_character() -> None:
    pool = read_qrels(
        io.StringIO('{"query_id": "q1", "doc_id": "\\ud83d\\ude00", "grade": 2}\n'), format="jsonl"
    )
    assert dict(pool["q1"]) == {"😀": 2}
