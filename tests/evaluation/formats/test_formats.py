"""TREC / CSV / JSONL readers and writers: exact round trips, and errors that name file and line."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

from evaluation.formats import detect_format, parse_grade_map, read_qrels, read_run, write_qrels, write_run
from evaluation.metrics import EvaluationError, Pool, Run, Settings, evaluate_run

CHINESE_POOL = Pool(
    {
        "报名后如何修改电话": {"文档甲": 3, "文档乙": 2, "文档丙": 1, "文档丁": 0, "文档戊": 0},
        "q2": {"d1": 1, "d2": 0, "長い-ID/with:punctuation": 2},
    }
)
SCORED_RUN = Run.from_scores(
    {
        "报名后如何修改电话": [
            ("文档丙", 0.1 + 0.2),
            ("文档甲", 1e-300),
            ("文档丁", -2.5),
            ("未判文档", 12345.678901234567),
        ],
        "q2": [("d2", 3.0), ("長い-ID/with:punctuation", 3.0)],
    },
    name="系统甲",
)
RANKED_RUN = Run.from_rankings(
    {"报名后如何修改电话": ["文档丙", "文档甲", "文档丁"], "q2": ["d1"]}, name="lists"
)


@pytest.mark.parametrize("suffix", [".txt", ".csv", ".jsonl"])
def test_qrels_round_trip_exactly_with_chinese_ids(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"qrels{suffix}"
    write_qrels(path, CHINESE_POOL)
    again = read_qrels(path)
    assert again == CHINESE_POOL
    assert again.query_ids == CHINESE_POOL.query_ids
    assert [list(again[q]) for q in again] == [list(CHINESE_POOL[q]) for q in CHINESE_POOL]


@pytest.mark.parametrize("suffix", [".txt", ".csv", ".jsonl"])
def test_scored_runs_round_trip_exactly_to_the_last_bit(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"run{suffix}"
    write_run(path, SCORED_RUN)
    again = read_run(path)
    assert again.as_dict() == SCORED_RUN.as_dict()
    assert again.name == path.name  # a run read from a file is named after it


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_rank_only_runs_round_trip_through_csv_and_jsonl(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"run{suffix}"
    write_run(path, RANKED_RUN)
    again = read_run(path)
    assert not again.has_scores
    assert again.as_dict() == RANKED_RUN.as_dict()


def test_a_rank_only_run_written_as_trec_keeps_its_order_through_scores(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    write_run(path, RANKED_RUN)
    again = read_run(path)
    settings = Settings(k=3, unjudged="zero")
    assert evaluate_run(CHINESE_POOL, again, settings).ndcg.tolist() == (
        evaluate_run(CHINESE_POOL, RANKED_RUN, settings).ndcg.tolist()
    )


def test_writers_and_readers_work_on_streams() -> None:
    buffer = io.StringIO()
    write_run(buffer, SCORED_RUN, format="jsonl")
    buffer.seek(0)
    buffer.name = "upload.jsonl"
    assert read_run(buffer).as_dict() == SCORED_RUN.as_dict()


def test_a_trec_id_with_whitespace_cannot_be_written(tmp_path: Path) -> None:
    pool = Pool({"q": {"two words": 1}})
    with pytest.raises(EvaluationError, match="'two words' cannot be written to a TREC file"):
        write_qrels(tmp_path / "qrels.txt", pool)
    write_qrels(tmp_path / "qrels.csv", pool)
    assert read_qrels(tmp_path / "qrels.csv") == pool


def test_format_comes_from_the_extension_or_the_explicit_choice() -> None:
    assert detect_format("qrels.test") == "trec"
    assert detect_format("x.CSV") == "csv"
    assert detect_format("x.ndjson") == "jsonl"
    assert detect_format("x.csv", "trec") == "trec"
    with pytest.raises(EvaluationError, match="unknown format 'xml'"):
        detect_format("x", "xml")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        ("q.txt", "q1 0 A 1\nq1 0 B 1.5\n", 2, r"grade '1\.5' is not an integer"),
        (
            "q.txt",
            "q1 0 A 1\nq1 0 B 4\n",
            2,
            r"grade 4 is outside 0\.\.3; map it with a grade map, e.g. '4:3'",
        ),
        (
            "q.txt",
            "q1 0 A 1\n\nq1 0 B -1\n",
            3,
            r"grade -1 is outside 0\.\.3; map it with a grade map, e.g. '-1:0'",
        ),
        ("q.txt", "q1 0 A 1\nq1 0 B\n", 2, r"expected 4 fields 'query iteration document grade', found 3"),
        (
            "q.txt",
            "q1 0 A 1\nq2 0 A 1\nq1 0 A 2\n",
            3,
            r"query 'q1', document 'A' is judged twice \(lines 1 and 3\)",
        ),
        ("q.csv", "query_id,doc_id,grade\nq1,A,2\nq1,B,two\n", 3, r"grade 'two' is not an integer"),
        ("q.csv", "query_id,doc_id,grade\nq1,A\n", 2, r"expected 3 columns like the header, found 2"),
        (
            "q.csv",
            "query_id,doc_id,grade\nq1, A,2\n",
            2,
            r"doc_id must be non-empty text or a whole number, without surrounding spaces",
        ),
        # Values are quoted as the JSON file wrote them, not as Python prints them (True, None, '2').
        (
            "q.jsonl",
            '{"query_id": "q1", "doc_id": "A", "grade": "2"}\n',
            1,
            r'grade must be a JSON integer 0\.\.3, got "2"$',
        ),
        ("q.jsonl", '{"query_id": "q1", "doc_id": "A", "grade": true}\n', 1, r"got true$"),
        ("q.jsonl", '{"query_id": "q1", "doc_id": "A", "grade": null}\n', 1, r"got null$"),
        ("q.jsonl", '{"query_id": "q1", "doc_id": "A", "grade": 2.0}\n', 1, r"got 2\.0$"),
        ("q.jsonl", '{"query_id": "q1", "doc_id": "A", "grade": [2]}\n', 1, r"got \[2\]$"),
        (
            "q.jsonl",
            '{"query_id": null, "doc_id": "A", "grade": 2}\n',
            1,
            r"query_id must be non-empty text or a whole number, .*, got null$",
        ),
        (
            "q.jsonl",
            '{"query_id": "q1", "doc_id": false, "grade": 2}\n',
            1,
            r"doc_id must be non-empty text or a whole number, .*, got false$",
        ),
        ("q.jsonl", '["q1", "A", 2]\n', 1, r'expected a JSON object, found \["q1", "A", 2\]$'),
        (
            "q.jsonl",
            '{"query_id": "q1", "doc_id": "A", "grade": 2}\n{"query_id": "q1"\n',
            2,
            r"not valid JSON",
        ),
        ("q.jsonl", '{"query_id": "q1", "grade": 2}\n', 1, r"no 'doc_id' key"),
        # json.loads would keep the last value silently (grade 1 here, or a judgment of B).
        (
            "q.jsonl",
            '{"query_id": "q1", "doc_id": "A", "grade": 3, "grade": 1}\n',
            1,
            r"the key 'grade' appears twice",
        ),
        (
            "q.jsonl",
            '{"query_id": "q1", "doc_id": "A", "grade": 3, "doc_id": "B"}\n',
            1,
            r"the key 'doc_id' appears twice",
        ),
    ],
)
def test_bad_qrels_are_refused_naming_file_line_and_value(
    tmp_path: Path, name: str, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(EvaluationError, match=message) as caught:
        read_qrels(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}, line {line}: ")


def test_a_qrels_header_without_the_grade_column_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "q.csv", "query_id,doc_id,relevance\nq1,A,1\n")
    # The header as the file writes it (it was shown as a Python list: ['query_id', 'doc_id', ...]).
    with pytest.raises(
        EvaluationError,
        match=r"the header 'query_id,doc_id,relevance' lacks grade; expected columns query_id,doc_id,grade",
    ):
        read_qrels(path)
    jsonl = write(tmp_path, "q.jsonl", '{"doc_id": "A", "body": "text"}\n')
    with pytest.raises(EvaluationError, match=r"line 1: the object has no 'query_id' key$"):
        read_qrels(jsonl)


def test_an_empty_qrels_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="no judgments found"):
        read_qrels(write(tmp_path, "q.txt", "\n"))


@pytest.mark.parametrize(
    ("name", "text"),
    [("r.txt", ""), ("r.txt", "\n\n"), ("r.csv", "query_id,doc_id,score\n"), ("r.jsonl", "\n")],
)
def test_an_empty_run_file_is_refused(tmp_path: Path, name: str, text: str) -> None:
    # Scored, it would give every query 0 without a word: almost always a pipeline that failed.
    with pytest.raises(EvaluationError, match=f"{name}: no ranked documents found"):
        read_run(write(tmp_path, name, text))


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        ("r.txt", "q1 Q0 A 1 2.0 t\nq1 Q0 B 2 abc t\n", 2, r"score 'abc' is not a finite number"),
        ("r.txt", "q1 Q0 A 1 2.0 t\nq1 Q0 B 2 nan t\n", 2, r"score 'nan' is not a finite number"),
        # float() reads these as 1000, 12 and 1; trec_eval's atof reads 1, 0 and 0: refused.
        (
            "r.txt",
            "q1 Q0 A 1 2.0 t\nq1 Q0 B 2 1_000 t\n",
            2,
            r"score '1_000' is not a finite number written with the digits 0-9",
        ),
        (
            "r.txt",
            "q1 Q0 A 1 2.0 t\nq1 Q0 B 2 \u0661\u0662 t\n",
            2,
            r"score '\u0661\u0662' is not a finite number",
        ),
        ("r.csv", "query_id,doc_id,score\nq1,A,\uff11\n", 2, r"score '\uff11' is not a finite number"),
        # A rank column beside an empty score column: the rank is read, not "score '' is not a number".
        (
            "r.csv",
            "query_id,doc_id,rank,score\nq1,B,1,\nq1,C,2,\n",
            2,
            r"document 'B': the score is empty; give every row a score, or leave the score column out",
        ),
        (
            "r.csv",
            "query_id,doc_id,score\nq1,A,\n",
            2,
            r"the score is empty; give every row a score, or order the run with a rank column",
        ),
        ("r.txt", "q1 Q0 A 1 1e999 t\n", 1, r"score '1e999' is not a finite number"),
        (
            "r.txt",
            "q1 Q0 A 1 2.0 t\nq1 Q0 B 2 1.0\n",
            2,
            r"expected 6 fields 'query Q0 document rank score tag', found 5",
        ),
        (
            "r.txt",
            "q1 Q0 A 1 2.0 t\nq2 Q0 A 1 2.0 t\nq1 Q0 A 2 1.0 t\n",
            3,
            r"document 'A' appears twice in the run \(lines 1 and 3\)",
        ),
        ("r.csv", "query_id,doc_id,rank\nq1,A,1\nq1,B,1\n", 3, r"rank 1 appears twice \(lines 2 and 3\)"),
        ("r.csv", "query_id,doc_id,rank\nq1,A,1\nq1,B,3\n", 3, r"ranks must be 1\.\.n without gaps"),
        ("r.csv", "query_id,doc_id,rank\nq1,A,0\n", 2, r"rank '0' is not a positive integer"),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": 1}\n{"query_id": "q1", "doc_id": "B", "rank": 2}\n',
            2,
            r"this row has no score but earlier rows do",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": "1"}\n',
            1,
            r'score must be a finite number, got "1"$',
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": null}\n',
            1,
            r"score must be a finite number, got null$",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "rank": true}\n',
            1,
            r"rank must be a positive integer, got true$",
        ),
        # As the file wrote them, not "got Infinity": 1e400 overflows to inf, 1e2 reads as 100.0.
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": 1e400}\n',
            1,
            r"score must be a finite number, got 1e400$",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": -1E+999}\n',
            1,
            r"finite number, got -1E\+999$",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "rank": 1e2}\n',
            1,
            r"rank must be a positive integer, got 1e2$",
        ),
        # A nonzero score that reads as 0.0 would tie with a real 0 and be quoted as 0.0.
        (
            "r.txt",
            "q1 Q0 A 1 1e-400 t\nq1 Q0 B 2 0 t\n",
            1,
            r"score '1e-400' is too close to 0 to be told apart",
        ),
        ("r.txt", "q1 Q0 A 1 2 t\nq1 Q0 B 2 -0.5e-999 t\n", 2, r"score '-0.5e-999' is too close to 0"),
        ("r.csv", "query_id,doc_id,score\nq1,A,9E-1000\n", 2, r"score '9E-1000' is too close to 0"),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": 1e-400}\n',
            1,
            r"score '1e-400' is too close to 0",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "rank": 0}\n',
            1,
            r"rank must be a positive integer, got 0$",
        ),
        ("r.jsonl", '{"query_id": "q1", "doc_id": "A"}\n', 1, r"neither 'score' nor 'rank'"),
        # A quote never closed would otherwise swallow the rest of the file into one field.
        (
            "r.csv",
            'query_id,doc_id,score\nq1,A,1\nq1,"B,2\nq1,C,3\n',
            3,
            r"a quote opened on this line is never closed",
        ),
        ("r.csv", 'query_id,doc_id,score\nq1,A,1\nq1,"B"x,2\n', 3, r"malformed CSV: ',' expected after '\"'"),
        # str.strip() takes these too: named, not refused as "surrounding spaces" and shown raw.
        (
            "r.csv",
            "query_id,doc_id,score\nq1,A\u2028,1\n",
            2,
            r"document ID 'A\\u2028' contains the character U\+2028",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A\\u0085", "score": 1}\n',
            1,
            r"document ID 'A\\x85' contains the character U\+0085",
        ),
        (
            "r.csv",
            "query_id,doc_id,score\nq1\x1c,A,1\n",
            2,
            r"query ID 'q1\\x1c' contains the character U\+001C",
        ),
        pytest.param(
            "r.csv",
            "query_id,doc_id,score\nq1,A,1\nq1," + "B" * (16 * 1024 * 1024 + 1) + ",2\n",
            3,
            r"a field on this line is longer than 16,777,216 characters, the most a field may hold$",
            id="a-field-over-the-csv-limit",
        ),
        # Two systems in one file must not be merged into one run.
        (
            "r.csv",
            "query_id,doc_id,rank,score,system\nq1,C,1,5,s\nq1,A,2,4,\nq1,B,3,3,t\n",
            4,
            r"this row's system 't' differs from 's' on line 2: one file holds one run",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": 2, "system": "bm25"}\n'
            '{"query_id": "q1", "doc_id": "B", "score": 1, "system": "dense"}\n',
            2,
            r"this row's system 'dense' differs from 'bm25' on line 1",
        ),
    ],
)
def test_bad_runs_are_refused_naming_file_line_and_value(
    tmp_path: Path, name: str, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(EvaluationError, match=message) as caught:
        read_run(path)
    assert caught.value.line == line


def test_a_run_without_score_or_rank_column_is_refused(tmp_path: Path) -> None:
    with pytest.raises(
        EvaluationError, match=r"lacks score\|rank; expected columns query_id,doc_id,score\|rank"
    ):
        read_run(write(tmp_path, "r.csv", "query_id,doc_id\nq1,A\n"))
    # Every missing column is named at once, so one correction fixes the header.
    with pytest.raises(EvaluationError, match=r"lacks query_id, doc_id, score\|rank;"):
        read_run(write(tmp_path, "r.csv", "qid,docno\nq1,A\n"))


def test_invalid_utf8_is_refused_naming_the_line_and_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "r.txt"
    path.write_bytes(b"q1 Q0 A 1 2.0 t\nq1 Q0 \xff 2 1.0 t\n")
    with pytest.raises(EvaluationError, match="not valid UTF-8: byte 0xff at column 7") as caught:
        read_run(path)
    assert caught.value.line == 2


def test_a_missing_file_is_an_evaluation_error(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="cannot read the file"):
        read_run(tmp_path / "nope.txt")


def test_blank_lines_and_interleaved_queries_are_read_in_file_order(tmp_path: Path) -> None:
    path = write(tmp_path, "r.txt", "q1 Q0 A 1 2.0 t\n\nq2 Q0 C 1 5.0 t\nq1 Q0 B 2 1.0 t\n")
    run = read_run(path)
    assert run.query_ids == ("q1", "q2")
    assert run.ranking("q1") == ("A", "B") and run.lines_of("q1") == (1, 4)


def test_errors_found_by_the_engine_point_into_the_run_file(tmp_path: Path) -> None:
    pool = Pool({"q1": {"A": 1, "B": 2}})
    path = write(tmp_path, "r.txt", "q1 Q0 A 1 2.0 t\nq1 Q0 X 2 1.5 t\nq1 Q0 B 3 1.0 t\n")
    with pytest.raises(EvaluationError, match=r"r\.txt, line 2: query 'q1': document 'X' has no grade"):
        evaluate_run(pool, read_run(path), Settings(k=3))
    tied = write(tmp_path, "tied.txt", "q1 Q0 A 1 2.0 t\nq1 Q0 X 2 1.0 t\nq1 Q0 B 3 1.0 t\n")
    with pytest.raises(
        EvaluationError,
        match=(
            r"tied\.txt, line 2: query 'q1': documents 'X', 'B' share the score 1\.0 "
            r"at ranks 2-3 \(lines 2, 3\)"
        ),
    ):
        evaluate_run(pool, read_run(tied), Settings(k=3, unjudged="zero"))


def test_a_grade_map_maps_grades_before_validation() -> None:
    assert parse_grade_map("-1:0, 4:3") == {-1: 0, 4: 3}
    assert parse_grade_map(None) == {}
    pool = read_qrels(io.StringIO("q 0 A -1\nq 0 B 4\nq 0 C 2\n"), format="trec", grade_map={-1: 0, 4: 3})
    assert dict(pool["q"]) == {"A": 0, "B": 3, "C": 2}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-1", "not FROM:TO"),
        ("a:1", "not FROM:TO"),
        ("4:5", r"target 5 \(for 4\) is outside 0\.\.3"),
        ("4:3,4:2", "maps 4 twice"),
        # Refused, not recorded as 10**100:3, which is not the number typed.
        ("9" * 101 + ":3", "has a number with more than 100 digits"),
    ],
)
def test_a_bad_grade_map_is_refused(text: str, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        parse_grade_map(text)


def test_runs_built_in_memory_are_validated_like_files() -> None:
    with pytest.raises(EvaluationError, match="'A' appears twice in the ranking"):
        Run(["q"], ["A", "A"], np.array([0, 2]))
    with pytest.raises(EvaluationError, match="score must be a finite number"):
        Run(["q"], ["A"], [0, 1], scores=[float("inf")])
    with pytest.raises(EvaluationError, match="offsets must rise from 0"):
        Run(["q"], ["A"], [0, 2])
    with pytest.raises(EvaluationError, match="score must be a number"):
        Run.from_scores({"q": {"A": True}})  # type: ignore[dict-item]


# Readers must not read a wrong value silently, nor name the wrong place.


@pytest.mark.parametrize("space", ["\u00a0", "\u3000", "\u2003"])
def test_trec_fields_are_split_at_ascii_whitespace_only(tmp_path: Path, space: str) -> None:
    """str.split() also split at Unicode spaces: 'B<NBSP>x 2 0.9' was read as document B with
    score 2 (the rank), exit 0. trec_eval's parser splits at ASCII whitespace."""
    pool = read_qrels(write(tmp_path, "q.txt", f"q1 0 A 3\nq1 0 B{space}x 1\nq1 0 B 2\n"))
    assert dict(pool["q1"]) == {"A": 3, f"B{space}x": 1, "B": 2}
    run = read_run(write(tmp_path, "r.txt", f"q1 Q0 A 1 0.5 t\nq1 Q0 B{space}x 2 0.9 t\n"))
    scores = run.scores_of("q1")
    assert scores is not None
    assert dict(zip(run.ranking("q1"), scores, strict=True)) == {"A": 0.5, f"B{space}x": 0.9}
    # A line with a field missing is refused, not read with the space as a separator.
    with pytest.raises(EvaluationError, match="expected 4 fields") as caught:
        read_qrels(write(tmp_path, "short.txt", f"q1 0 A 3\nq1 文档{space}甲 2\n"))
    assert caught.value.line == 2


@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f"])
@pytest.mark.parametrize("as_path", [True, False])
def test_an_information_separator_in_a_trec_id_is_refused_not_split_at(
    tmp_path: Path, char: str, as_path: bool
) -> None:
    """str.split() splits ASCII text at U+001C-U+001F too, so "d<US>x" would read as document d
    with rank "x", the real score taken for the tag. trec_eval does not split there."""
    code = f"U+{ord(char):04X}"
    run = f"q1 Q0 B 1 3 t\nq1 Q0 d{char}x 2 2.5 t\n"
    qrels = f"q1 0 A{char} 3\nq1 0 B 1\n"
    for reader, text, line in ((read_run, run, 2), (read_qrels, qrels, 1)):
        source = write(tmp_path, "f.txt", text) if as_path else io.StringIO(text)
        with pytest.raises(EvaluationError, match=f"contains the character {re.escape(code)}") as caught:
            reader(source, format="trec")
        assert caught.value.line == line


def test_a_no_break_space_inside_a_trec_id_is_written_and_read_back(tmp_path: Path) -> None:
    """The reader keeps NBSP and U+3000 inside an ID (trec_eval does not split there); the writer
    writes them too, or such a pool could not be exported as qrels."""
    pool = read_qrels(write(tmp_path, "p.txt", "q1 0 a\u00a0b 2\nq\u3000x 0 c 1\n"))
    assert {q: dict(pool[q]) for q in pool} == {"q1": {"a\u00a0b": 2}, "q\u3000x": {"c": 1}}
    out = tmp_path / "again.txt"
    write_qrels(out, pool, format="trec")
    assert read_qrels(out).fingerprint == pool.fingerprint
    with pytest.raises(EvaluationError, match="cannot be written to a TREC file"):
        write_qrels(
            tmp_path / "no.txt",
            read_qrels(io.StringIO("query_id,doc_id,grade\nq1,a b,1\n"), format="csv"),
            format="trec",
        )


@pytest.mark.parametrize(
    ("name", "text", "line", "message"),
    [
        # A byte-order mark in mid-file: two files joined with cat.
        ("q.txt", "q1 0 A 3\n\ufeffq2 0 B 2\n", 2, r"query ID '\\ufeffq2' contains the character U\+FEFF"),
        ("q.txt", "q1 0 A\x01B 3\n", 1, r"document ID 'A\\x01B' contains the character U\+0001"),
        (
            "r.txt",
            "q1 Q0 A 1 2.0 t\nq1 Q0 B\x7f 2 1.0 t\n",
            2,
            r"document ID 'B\\x7f' contains the character U\+007F",
        ),
        (
            "q.csv",
            'query_id,doc_id,grade\nq1,"B\nX",3\n',
            2,
            r"document ID 'B\\nX' contains the character U\+000A",
        ),
        (
            "r.csv",
            'query_id,doc_id,rank\n"q\t1",A,1\n',
            2,
            r"query ID 'q\\t1' contains the character U\+0009",
        ),
        (
            "r.jsonl",
            '{"query_id": "q1", "doc_id": "A\\u0001B", "score": 1}\n',
            1,
            r"contains the character U\+0001",
        ),
        # Line breaks to Unicode, which the app's imports refuse as well: C1 controls and separators.
        (
            "q.jsonl",
            '{"query_id": "q1", "doc_id": "A\\u0085B", "grade": 1}\n',
            1,
            r"contains the character U\+0085",
        ),
        (
            "r.csv",
            "query_id,doc_id,rank\nq1,A\u2028B,1\n",
            2,
            r"document ID 'A\\u2028B' contains the character U\+2028",
        ),
        # Invisible characters: an ID that looks like another one.
        (
            "r.txt",
            "q1 Q0 d1 1 2.0 t\nq1 Q0 d1\u200b 2 1.0 t\n",
            2,
            r"document ID 'd1\\u200b' contains the character U\+200B; IDs cannot hold control characters, "
            r"tabs, line breaks, invisible characters",
        ),
        ("q.txt", "q1 0 A 3\nq\u202e2 0 B 2\n", 2, r"query ID 'q\\u202e2' contains the character U\+202E"),
        (
            "q.jsonl",
            '{"query_id": "q1", "doc_id": "A\\u00adB", "grade": 1}\n',
            1,
            r"contains the character U\+00AD",
        ),
    ],
)
def test_ids_with_control_characters_or_a_bom_are_refused(
    tmp_path: Path, name: str, text: str, line: int, message: str
) -> None:
    """They break the TAB-separated text table and pool serialisation, or hide a query."""
    path = write(tmp_path, name, text)
    reader = read_qrels if name.startswith("q") else read_run
    with pytest.raises(EvaluationError, match=message) as caught:
        reader(path)
    assert caught.value.line == line


def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path: Path) -> None:
    """Otherwise the last copy wins silently: grade,grade would read the second grade."""
    path = write(tmp_path, "q.csv", "query_id,doc_id,grade,grade\nq1,A,3,1\n")
    with pytest.raises(EvaluationError, match=r"line 1: the header .* names the column 'grade' twice"):
        read_qrels(path)
    with pytest.raises(EvaluationError, match="names the column 'rank' twice"):
        read_run(write(tmp_path, "r.csv", "query_id,doc_id,rank, rank\nq1,A,1,2\n"))


def test_a_csv_record_spanning_lines_is_named_by_its_first_line(tmp_path: Path) -> None:
    text = 'query_id,doc_id,score,note\nq1,A,1,"multi\nline\nnote"\nq1,B,2,x\nq1,A,3,y\n'
    with pytest.raises(EvaluationError, match=r"appears twice in the run \(lines 2 and 6\)") as caught:
        read_run(write(tmp_path, "r.csv", text))
    assert caught.value.line == 6
    run = read_run(write(tmp_path, "ok.csv", text.replace("q1,A,3,y\n", "")))
    assert run.lines_of("q1") == (2, 5)


def test_jsonl_ids_may_be_json_integers_as_the_imports_take_them(tmp_path: Path) -> None:
    pool = read_qrels(write(tmp_path, "q.jsonl", '{"query_id": 1, "doc_id": 20, "grade": 3}\n'))
    assert dict(pool["1"]) == {"20": 3}
    run = read_run(write(tmp_path, "r.jsonl", '{"query_id": 1, "doc_id": 20, "rank": 1}\n'))
    assert run.ranking("1") == ("20",)
    for value in ("true", "1.5", "null"):
        with pytest.raises(EvaluationError, match=f"non-empty text or a whole number.*, got {value}$"):
            read_qrels(write(tmp_path, "bad.jsonl", f'{{"query_id": {value}, "doc_id": "A", "grade": 3}}\n'))


def test_a_jsonl_syntax_error_names_its_column_on_its_line(tmp_path: Path) -> None:
    """The newline is not parsed: an error at the end of the line is not at "column 1"."""
    with pytest.raises(EvaluationError, match=r"line 1: not valid JSON \(the problem is at column 18\)\.$"):
        read_qrels(write(tmp_path, "q.jsonl", '{"query_id":"q1",\n'))


def test_a_gzip_file_is_named_as_such(tmp_path: Path) -> None:
    import gzip

    path = tmp_path / "q.txt.gz"
    path.write_bytes(gzip.compress(b"q1 0 A 3\n"))
    with pytest.raises(EvaluationError, match="line 1: the file is gzip-compressed: decompress it"):
        read_qrels(path, format="trec")


@pytest.mark.parametrize("name", ["r.txt", "r.csv"])
@pytest.mark.parametrize("zero", ["0", "-0", "0.000", "0e5", "00.0E-400", ".0"])
def test_a_zero_written_any_way_reads_as_0(tmp_path: Path, name: str, zero: str) -> None:
    """The underflow refusal is for nonzero digits only: every spelling of 0 is a 0."""
    path = tmp_path / name
    if name.endswith(".csv"):
        path.write_text(f"query_id,doc_id,score\nq1,A,2\nq1,B,{zero}\n")
    else:
        path.write_text(f"q1 Q0 A 1 2 t\nq1 Q0 B 2 {zero} t\n")
    run = read_run(path)
    assert run.ranking("q1") == ("A", "B")
    assert run.scores_of("q1") == (2.0, 0.0)
