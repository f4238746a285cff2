"""`read_run(..., collect=n)`: a run file's problems gathered, in line order, up to n; by default
the first problem alone is raised, as ever. No database."""

from __future__ import annotations

import io
import pickle

import pytest

from evaluation.formats import EvaluationError, EvaluationErrors, Purpose, read_run
from evaluation.formats.problems import Problems


def stream(text: str, name: str) -> io.TextIOWrapper:
    buffer = io.BytesIO(text.encode("utf-8"))
    buffer.name = name
    return io.TextIOWrapper(buffer, encoding="utf-8-sig", newline="" if name.endswith(".csv") else None)


def collected(text: str, name: str, collect: int = 20, purpose: Purpose = "pooling") -> EvaluationErrors:
    with pytest.raises(EvaluationErrors) as info:
        read_run(stream(text, name), purpose=purpose, collect=collect)
    return info.value


# Four bad lines a format each, the first one's message as the default path words it.
SEVERAL = {
    "r.trec": (
        "q1 Q0 A 1 0.5\nq1 Q0 B 1 high t\nq1 Q0 C 1 0.3 t\nq1 Q0 C 2 0.2 t\n"
        "q1 Q0 D 3 0.1 t\nq1 Q0 E 4 nan t\n",
        [1, 2, 4, 6],
        "r.trec, line 1: expected 6 fields 'query Q0 document rank score tag', found 5: 'q1 Q0 A 1 0.5'",
    ),
    "r.csv": (
        "query_id,doc_id,rank\nq1,A,1\nq1,B,first\nq1,C\nq1,A,2\nq1,D,3\nq1,E,0\n",
        [3, 4, 5, 7],
        "r.csv, line 3: query 'q1', document 'B': rank 'first' is not a positive integer",
    ),
    "r.jsonl": (
        '{"query_id": "q1", "doc_id": "A", "rank": 1}\nnot json\n{"query_id": "q1"}\n'
        '{"query_id": "q1", "doc_id": "B", "rank": 2}\n[1]\n{"query_id": "q1", "doc_id": "C", "rank": "3"}\n',
        [2, 3, 5, 6],
        "r.jsonl, line 2: not valid JSON (the problem is at column 1).",
    ),
}


@pytest.mark.parametrize("name", SEVERAL)
def test_every_bad_line_is_named_in_line_order(name: str) -> None:
    text, lines, first = SEVERAL[name]
    found = collected(text, name)
    assert [error.line for error in found.errors] == lines and found.more == 0
    assert str(found.errors[0]) == first
    assert all(error.source == name and type(error) is EvaluationError for error in found.errors)


@pytest.mark.parametrize("name", SEVERAL)
def test_by_default_only_the_first_problem_is_raised_as_before(name: str) -> None:
    text, _lines, first = SEVERAL[name]
    with pytest.raises(EvaluationError) as info:
        read_run(stream(text, name), purpose="pooling")
    assert type(info.value) is EvaluationError and str(info.value) == first


@pytest.mark.parametrize(
    ("name", "header", "bad"),
    [
        ("r.trec", "", "q1 Q0 D{i} 1 x{i} t\n"),
        ("r.csv", "query_id,doc_id,rank\n", "q1,D{i},r{i}\n"),
        ("r.jsonl", "", '{{"query_id": "q1", "doc_id": "D{i}"}}\n'),
    ],
)
def test_past_the_limit_problems_are_counted_not_kept(name: str, header: str, bad: str) -> None:
    found = collected(header + "".join(bad.format(i=i) for i in range(25)), name, purpose="compare")
    first_line = 2 if header else 1
    assert [error.line for error in found.errors] == list(range(first_line, first_line + 20))
    assert found.more == 5
    assert str(found).endswith("; 5 more") and str(found).startswith(str(found.errors[0]))


def test_rank_problems_found_at_the_end_take_their_place_by_line() -> None:
    # The rank given twice (line 3) is found after the rows are read, so after line 4's.
    text = "query_id,doc_id,rank\nq1,A,1\nq1,B,1\nq1,C,x\n"
    assert [error.line for error in collected(text, "r.csv").errors] == [3, 4]
    only = collected(text, "r.csv", collect=1)
    assert [error.line for error in only.errors] == [3] and only.more == 1


def test_a_refused_row_does_not_also_make_a_rank_gap() -> None:
    # Under comparing, the skipped rank 2 would leave 1, 3, 4 and call every later rank a gap.
    text = "query_id,doc_id,rank\nq1,A,1\nq1,B,2\nq1,B,3\nq1,D,4\n"
    found = collected(text, "r.csv", purpose="compare")
    assert [error.line for error in found.errors] == [4]
    assert "appears twice in the run" in str(found.errors[0])
    gaps = collected("query_id,doc_id,rank\nq1,A,1\nq1,B,3\nq1,C,4\nq2,D,2\n", "r.csv", purpose="compare")
    assert [(error.line, error.query) for error in gaps.errors] == [(3, "q1"), (5, "q2")]


def test_a_problem_that_ends_the_reading_joins_those_before_it() -> None:
    text = 'query_id,doc_id,rank\nq1,A,x\nq1,B,2\n"q1,C,3\n'
    found = collected(text, "r.csv")
    assert [error.line for error in found.errors] == [2, 4]
    assert "never closed" in str(found.errors[1])
    header = collected("query_id,doc\nq1,A\n", "r.csv")
    assert [error.line for error in header.errors] == [1] and "lacks doc_id" in str(header)


def test_a_file_without_problems_reads_the_same_when_collecting() -> None:
    text = "q1 Q0 A 1 2.5 bm25\nq1 Q0 B 2 1.5 bm25\nq2 Q0 C 1 1 bm25\n"  # the column pass reads it
    run = read_run(stream(text, "r.trec"), collect=20)
    assert run.rows == read_run(stream(text, "r.trec")).rows == 3
    assert [run.ranking(q) for q in run.query_ids] == [("A", "B"), ("C",)]
    with pytest.raises(EvaluationErrors) as info:
        read_run(stream("", "r.trec"), collect=20)
    assert str(info.value) == "r.trec: no ranked documents found"


def test_the_aggregate_stands_for_its_first_problem() -> None:
    found = collected(SEVERAL["r.csv"][0], "r.csv")
    first = found.errors[0]
    assert isinstance(found, EvaluationError)
    assert (found.template, found.params, found.line, found.query, found.doc_id) == (
        first.template,
        first.params,
        first.line,
        first.query,
        first.doc_id,
    )
    copy = pickle.loads(pickle.dumps(found))
    assert (str(copy), [str(e) for e in copy.errors], copy.more) == (
        str(found),
        [str(e) for e in found.errors],
        0,
    )


def test_a_collector_raises_at_once_unless_it_collects() -> None:
    error = EvaluationError("bad", source="f", line=3)
    with pytest.raises(EvaluationError) as info:
        Problems().add(error)
    assert info.value is error
    problems = Problems(2)
    problems.check()  # nothing found: nothing raised
    for line in (5, 1, 3, 1):
        problems.add(EvaluationError("bad %(n)s", {"n": line}, source="f", line=line))
    with pytest.raises(EvaluationErrors) as many:
        problems.check()
    assert [e.line for e in many.value.errors] == [1, 1] and many.value.more == 2
    with pytest.raises(ValueError, match="at least one"):
        Problems(0)
