"""Pooling (annotator/grading/pooling.py): run files read by the engine's one run reader, and the
union of each run's top k. Pure Python, no database."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.utils import translation

from annotator.documents.readers import ImportFileError
from annotator.grading.pooling import PROVENANCE_MAX_LENGTH, PooledPair, pool_top_k, read_run
from evaluation.formats import write_run
from evaluation.formats.ids import bad_id_chars
from evaluation.metrics import Run
from evaluation.metrics.ndcg import ranked_indices
from tests.annotator.grading.test_importers import BAD_ID_CHARS


@pytest.fixture(autouse=True)
def in_english() -> Iterator[None]:
    with translation.override("en"):
        yield


def problems(call: Callable[[], object]) -> list[str]:
    with pytest.raises(ImportFileError) as info:
        call()
    return info.value.messages()


@pytest.mark.parametrize("char", ["\x1f", "\x85", "\u2028", "\u2029"])
def test_a_trec_candidates_file_is_split_where_trec_eval_splits(char: str) -> None:
    """str.split() would cut "d<NEL>x" into document "d" and a shifted line (score 2 from the rank
    column), pooled without a word; the comparison reader splits at C's whitespace only."""
    (message,) = problems(
        lambda: read_run(f"q1 Q0 A 1 3 t\nq1 Q0 d{char}x 2 2.5 t\n".encode(), "trec", "f.run")
    )
    assert message.startswith("Line 2: query “q1”: document ID “d"), message
    assert f"contains the character U+{ord(char):04X}" in message
    # A no-break or ideographic space is part of the ID, as trec_eval and the comparison reader read it.
    run = read_run("q1 Q0 d\u00a0x 1 3 t\n".encode(), "trec", "f.run")
    assert (run.ranking("q1"), list(run.scores_of("q1") or ()), run.name) == (("d\u00a0x",), [3.0], "t")


@pytest.mark.parametrize("char", BAD_ID_CHARS)
def test_a_candidate_id_holds_no_character_the_pool_readers_refuse(char: str) -> None:
    assert bad_id_chars(char)  # the pool readers' rule, which pooling must not be looser than
    value = json.dumps(f"C{char}X")
    (message,) = problems(
        lambda: read_run(f'{{"query_id": "q", "doc_id": {value}, "rank": 1}}\n', "jsonl", "r")
    )
    assert message.startswith("Line 1: query “q”: document ID “C"), message
    assert f"contains the character U+{ord(char):04X}; IDs cannot hold control characters" in message


def test_a_long_provenance_names_what_fits_and_counts_the_rest() -> None:
    """Cut at 500 characters, a pair pooled by 30 runs lost 23 of their names and its "(k=10)"."""
    pair = PooledPair("q1", "A", hits=[(f"run-number-{i:02d}", i + 1) for i in range(30)])
    text = pair.provenance(10)
    assert len(text) <= PROVENANCE_MAX_LENGTH and text.endswith(" (k=10)")
    named, rest = text.removesuffix(" (k=10)").rsplit(", … +", 1)
    assert len(named.split(", ")) + int(rest) == 30
    assert (
        PooledPair("q1", "A", hits=[("bm25", 3), ("dense", 1)]).provenance(10) == "bm25 #3, dense #1 (k=10)"
    )


TREC_RUN = """q1 Q0 D 1 0.9 bm25
q1 Q0 A 2 0.8 bm25
q1 Q0 C 3 0.8 bm25
q1 Q0 B 4 0.1 bm25
q2 Q0 X 1 5 bm25
"""


def test_a_trec_run_is_named_by_its_tag_and_ordered_by_score() -> None:
    run = read_run(TREC_RUN, "trec", default_name="file.trec")
    assert run.name == "bm25"
    pairs = pool_top_k([("file.trec", run)], depth=1)
    assert [(p.query_id, p.doc_id, p.hits) for p in pairs] == [
        ("q1", "D", [("bm25", 1)]),
        ("q2", "X", [("bm25", 1)]),
    ]
    several = read_run("q1 Q0 A 1 2 bm25\nq1 Q0 B 2 1 dense\n", "trec", default_name="both.trec")
    assert several.name == "both.trec"  # one file is one run: several tags name it after the file


def test_pooling_takes_the_union_of_each_runs_top_k_with_every_position() -> None:
    other = read_run("query_id,doc_id,rank\nq1,B,1\nq1,D,2\nq1,E,3\n", "csv", default_name="dense.csv")
    bm25 = read_run(TREC_RUN, "trec", default_name="bm25.trec")
    pairs = pool_top_k([("bm25.trec", bm25), ("dense.csv", other)], depth=2)
    found = {(p.query_id, p.doc_id): p.hits for p in pairs}
    # bm25's top 2 is D then a tie A/C at 0.8: both tied documents are pooled (trec_eval order: C before A).
    assert found == {
        ("q1", "D"): [("bm25", 1), ("dense.csv", 2)],
        ("q1", "C"): [("bm25", 2)],
        ("q1", "A"): [("bm25", 3)],
        ("q2", "X"): [("bm25", 1)],
        ("q1", "B"): [("dense.csv", 1)],
    }
    assert found[("q1", "D")] and pairs[0].provenance(2) == "bm25 #1, dense.csv #2 (k=2)"
    assert [(p.line, p.source) for p in pairs[:2]] == [(1, "bm25.trec"), (3, "bm25.trec")]


def test_without_a_depth_every_listed_pair_is_pooled_in_file_order() -> None:
    run = read_run(
        '{"query_id": "q1", "doc_id": "A"}\n{"query_id": "q1", "doc_id": "B"}\n',
        "jsonl",
        default_name="pairs",
    )
    assert [(p.doc_id, p.hits) for p in pool_top_k([("pairs.jsonl", run)], None)] == [
        ("A", [("pairs", 1)]),
        ("B", [("pairs", 2)]),
    ]


def test_ranks_with_gaps_pool_in_rank_order() -> None:
    run = read_run("query_id,doc_id,rank\nq1,A,5\nq1,B,1\nq1,C,3\n", "csv", default_name="gaps.csv")
    assert [(p.doc_id, p.hits) for p in pool_top_k([("gaps.csv", run)], 2)] == [
        ("B", [("gaps.csv", 1)]),
        ("C", [("gaps.csv", 2)]),
    ]


@pytest.mark.parametrize("fmt", ["trec", "csv", "jsonl"])
def test_a_run_written_by_the_evaluation_formats_pools_in_the_engines_order(fmt: str, tmp_path: Path) -> None:
    """One run file serves both pooling and comparing: what the evaluation writers produce (the
    files a comparison exports), the pooling reader takes, with the same name and, per query, the
    order the engine ranks by under trec_eval's tie rule."""
    run = Run.from_scores(
        {"q1": [("A", 0.5), ("B", 2.0), ("C", 0.5), ("文档", 1.0)], "q2": [("X", -1.0)]}, name="bm25"
    )
    path = tmp_path / f"run.{fmt}"
    write_run(path, run, format=fmt)
    read = read_run(path.read_bytes(), fmt, default_name=path.name)
    assert read.name == "bm25"
    pooled = pool_top_k([(path.name, read)], depth=None)
    for query in run.query_ids:
        scores = run.scores_of(query)
        assert scores is not None
        order = ranked_indices(run.ranking(query), list(scores), "docid-desc", k=None, query_id=query)
        engine = [run.ranking(query)[i] for i in order]
        assert [p.doc_id for p in pooled if p.query_id == query] == engine
    assert engine == ["X"] and [p.doc_id for p in pooled][:4] == ["B", "文档", "C", "A"]


@pytest.mark.parametrize(
    ("fmt", "data", "expected"),
    [
        ("trec", "q1 Q0 A 1 0.5\n", "Line 1: expected 6 fields 'query Q0 document rank score tag', found 5"),
        (
            "trec",
            "q1 Q0 A 1 high bm25\n",
            "Line 1: query “q1”, document “A”: score “high” is not a finite number written with the digits",
        ),
        ("trec", "q1 Q0 A 1 nan bm25\n", "score “nan” is not a finite number"),
        (
            "trec",
            "q1 Q0 A 1 1_000 bm25\n",
            "score “1_000” is not a finite number written with the digits 0-9",
        ),
        ("trec", "q1 Q0 A 1 1e-400 bm25\n", "score “1e-400” is too close to 0 to be told apart from it"),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": -1e-400}\n',
            "score “-1e-400” is too close to 0",
        ),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": "12.5"}\n',
            'Line 1: query “q1”, document “A”: score must be a finite number, got "12.5"',
        ),
        (
            "trec",
            "q1 Q0 A 1 0.5 r\nq1 Q0 A 2 0.4 r\n",
            "Line 2: query “q1”: document “A” appears twice in the run (lines 1 and 2)",
        ),
        (
            "csv",
            "query_id,doc_id,rank\nq1,A,1\nq1,B,1\n",
            "Line 3: query “q1”, document “B”: rank 1 appears twice (lines 2 and 3)",
        ),
        (
            "csv",
            "query_id,doc_id,rank\nq1,A,first\n",
            "Line 2: query “q1”, document “A”: rank “first” is not a positive integer",
        ),
        (
            "csv",
            "query_id,doc_id,rank\nq1,A,１\n",
            "Line 2: query “q1”, document “A”: rank “１” is not written plainly; write 1",
        ),
        (
            "csv",
            "query_id,doc_id,score,rank\nq1,A,0.5,\nq1,B,,2\n",
            "Line 3: query “q1”, document “B”: the score is empty",
        ),
        (
            "csv",
            "query_id,doc_id,system\nq1,A,x\nq1,B,y\n",
            "Line 3: this row's system “y” differs from “x” on line 2: one file holds one run",
        ),
        (
            "csv",
            "query_id,doc_id,rank\nq1,A,0\n",
            "Line 2: query “q1”, document “A”: rank “0” is not a positive integer",
        ),
        (
            "csv",
            "query_id,doc_id,run\nq1,A,x\n",
            "Line 1: the header names neither score nor rank, and “run”, which is not a run column",
        ),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A", "rnak": 1}\n',
            "Line 1: query “q1”, document “A”: the object has neither 'score' nor 'rank', and “rnak”",
        ),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A"}\n{"query_id": "q1", "doc_id": "B", "rank": 1}\n',
            "Line 2: query “q1”, document “B”: earlier rows have neither score nor rank but this one has",
        ),
        (
            "csv",
            f"query_id,doc_id,rank\nq1,{'D' * 256},1\n",
            f"Line 2: query “q1”: document ID “{'D' * 40}…” is longer than 255 characters, which no pool",
        ),
        ("csv", "", "Line 1: the file is empty; expected a header query_id,doc_id"),
        ("csv", "query_id,doc_id,rank\n", "Line 1: no ranked documents found"),
    ],
)
def test_run_problems_are_named_precisely(fmt: str, data: str, expected: str) -> None:
    (message,) = problems(lambda: read_run(data, fmt, default_name="run"))
    assert expected in message, message


def test_a_problem_is_said_in_the_readers_language() -> None:
    with translation.override("zh-hans"):
        (message,) = problems(lambda: read_run("query_id,doc_id,rank\nq1,A,1\nq1,B,1\n", "csv", "r"))
    assert "第 2 行和第 3 行" in message and "appears twice" not in message, message


@pytest.mark.parametrize(
    ("fmt", "data", "expected"),
    [
        (
            "trec",
            "q1 Q0 A 1 0.5\nq1 Q0 B 1 high t\nq1 Q0 C 1 0.3 t\nq1 Q0 C 2 0.2 t\n",
            [
                "Line 1: expected 6 fields 'query Q0 document rank score tag', found 5",
                "Line 2: query “q1”, document “B”: score “high” is not a finite number",
                "Line 4: query “q1”: document “C” appears twice in the run (lines 3 and 4)",
            ],
        ),
        (
            "csv",
            "query_id,doc_id,rank\nq1,A,1\nq1,B,first\nq1,C\nq1,D,1\n",
            [
                "Line 3: query “q1”, document “B”: rank “first” is not a positive integer",
                "Line 4: expected 3 columns like the header, found 2",
                "Line 5: query “q1”, document “D”: rank 1 appears twice (lines 2 and 5)",
            ],
        ),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A", "rank": 1}\nnot json\n{"query_id": "q1"}\n'
            '{"query_id": "q1", "doc_id": "B", "rank": "2"}\n',
            [
                "Line 2: not valid JSON (the problem is at column 1).",
                "Line 3: the object has no “doc_id” key",
                'Line 4: query “q1”, document “B”: rank must be a positive integer, got "2"',
            ],
        ),
    ],
)
def test_every_bad_line_of_a_candidates_file_is_listed(fmt: str, data: str, expected: list[str]) -> None:
    found = problems(lambda: read_run(data, fmt, default_name="run"))
    assert len(found) == len(expected)
    for message, start in zip(found, expected, strict=True):
        assert message.startswith(start), message


@pytest.mark.parametrize(
    ("fmt", "header", "bad"),
    [
        ("trec", "", "q1 Q0 D{i} 1 x{i} t\n"),
        ("csv", "query_id,doc_id,rank\n", "q1,D{i},r{i}\n"),
        ("jsonl", "", '{{"query_id": "q1", "doc_id": "D{i}", "rnak": 1}}\n'),
    ],
)
def test_a_candidates_file_lists_twenty_problems_and_counts_the_rest(fmt: str, header: str, bad: str) -> None:
    data = header + "".join(bad.format(i=i) for i in range(23))
    found = problems(lambda: read_run(data, fmt, default_name="run"))
    first = 2 if header else 1
    assert [message.split(":")[0] for message in found[:-1]] == [
        f"Line {line}" for line in range(first, first + 20)
    ]
    assert found[-1] == "More problems not listed here: 3."


def test_candidates_read_a_run_as_the_comparison_reader_does() -> None:
    """trec_eval's results.trunc (text after the tag) is accepted for pooling as for comparing,
    and a blank `system` cell is not a second system named ""."""
    from evaluation.formats import read_run as read_engine_run

    trunc = Path(__file__).resolve().parents[3].parent / "shared" / "oracles" / "trec_eval" / "results.trunc"
    pooled = read_run(trunc.read_bytes(), "trec", "results.trunc")
    engine = read_engine_run(str(trunc), format="trec")
    assert pooled.name == "STANDARD"
    assert pooled.rows == engine.rows
    assert sorted((q, d) for q in pooled.query_ids for d in pooled.ranking(q)) == sorted(
        (q, d) for q in engine.query_ids for d in engine.ranking(q)
    )
    csv_run = read_run(b"query_id,doc_id,rank,system\nq1,A,1,bm25\nq1,B,2,\n", "csv", "run.csv")
    assert csv_run.name == "bm25"
