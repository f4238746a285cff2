"""trec_eval's own test collection as an outside oracle (../shared/oracles/trec_eval).

Under trec_eval's conventions (unjudged documents gain 0, ties broken by docno descending, a topic
missing from the run scored 0 with -c) every per-topic and `all` value of `ndcg` and `ndcg_cut_K`
printed in out.test.aq / out.test.aqc must come out of the engine, rounded to the 4 printed digits.
trec_eval's plain `ndcg` has no cutoff: the whole ranking against the ideal of all judged documents.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.formats import read_qrels, read_run
from evaluation.formats.trec import _careful_qrels, _careful_run
from evaluation.formats.values import GradeReader
from evaluation.metrics import EvaluationError, Pool, Run, Settings, evaluate_run

ORACLE = Path(__file__).resolve().parents[3] / ".." / "shared" / "oracles" / "trec_eval"
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def printed(name: str) -> dict[tuple[str, str], str]:
    """{(measure, topic): value as printed} for the ndcg measures of one expected-output file."""
    values = {}
    for line in (ORACLE / name).read_text().splitlines():
        measure, topic, value = line.split()
        if measure == "ndcg" or measure.startswith("ndcg_cut_"):
            values[(measure, topic)] = value
    return values


def whole_ranking_k(pool: Pool, run: Run) -> int:
    """A K no ranking and no pool reaches: NDCG over everything, as trec_eval's plain `ndcg`."""
    return max(max(len(pool[q]) for q in pool), max(len(run.ranking(q)) for q in run.query_ids))


def engine_values(pool: Pool, run: Run) -> dict[tuple[str, str], str]:
    values = {}
    for measure, k in [("ndcg", whole_ranking_k(pool, run)), *((f"ndcg_cut_{c}", c) for c in CUTOFFS)]:
        result = evaluate_run(
            pool, run, Settings(k=k, unjudged="zero", ties="docid-desc", missing_queries="zero")
        )
        for query, value in zip(result.query_ids, result.ndcg.tolist(), strict=True):
            values[(measure, query)] = f"{value:.4f}"
        assert result.mean is not None
        values[(measure, "all")] = f"{result.mean:.4f}"
    return values


def test_every_ndcg_value_of_out_test_aq_is_reproduced() -> None:
    expected = printed("out.test.aq")
    assert len(expected) == 4 * (1 + len(CUTOFFS))  # three topics and `all`, ten measures
    got = engine_values(read_qrels(ORACLE / "qrels.test"), read_run(ORACLE / "results.test"))
    assert got == expected


def test_every_ndcg_value_of_out_test_aqc_is_reproduced_with_the_missing_topic_scored_zero() -> None:
    expected = printed("out.test.aqc")
    pool = read_qrels(ORACLE / "qrels.test")
    run = read_run(ORACLE / "results.trunc")
    missing = [q for q in pool if q not in run]
    assert missing  # results.trunc lacks a topic that the qrels judge
    got = engine_values(pool, run)
    assert got == expected
    result = evaluate_run(pool, run, Settings(unjudged="zero", ties="docid-desc"))
    assert result.counts.missing_from_run == len(missing)


def test_a_missing_topic_is_an_error_under_the_error_policy() -> None:
    pool = read_qrels(ORACLE / "qrels.test")
    run = read_run(ORACLE / "results.trunc")
    missing = next(q for q in pool if q not in run)
    with pytest.raises(EvaluationError, match=f"pool query '{missing}' is missing from run 'results.trunc'"):
        evaluate_run(pool, run, Settings(unjudged="zero", ties="docid-desc", missing_queries="error"))


def test_results_trunc_tolerates_the_junk_after_the_tag_as_trec_eval_does() -> None:
    lines = (ORACLE / "results.trunc").read_text().splitlines()
    assert any(len(line.split()) > 6 for line in lines)
    run = read_run(ORACLE / "results.trunc")
    assert run.rows == len(lines)
    assert set(run.query_ids) == {line.split()[0] for line in lines}


def test_the_fast_and_the_careful_readers_agree_on_the_oracle_files() -> None:
    for name in ("results.test", "results.trunc"):
        with open(ORACLE / name, encoding="utf-8") as handle:
            careful = _careful_run(handle, name, name)
        assert read_run(ORACLE / name).as_dict() == careful.as_dict()
    with open(ORACLE / "qrels.test", encoding="utf-8") as handle:
        careful_pool = _careful_qrels(handle, GradeReader(None, "qrels.test"), "qrels.test")
    assert read_qrels(ORACLE / "qrels.test") == careful_pool


def test_qrels_rel_level_is_refused_at_its_first_grade_outside_0_to_3() -> None:
    lines = (ORACLE / "qrels.rel_level").read_text().splitlines()
    first_bad = next(n for n, line in enumerate(lines, start=1) if int(line.split()[3]) not in range(4))
    with pytest.raises(EvaluationError, match=f"qrels.rel_level, line {first_bad}: ") as caught:
        read_qrels(ORACLE / "qrels.rel_level")
    assert caught.value.line == first_bad
    assert "outside 0..3" in str(caught.value)


def test_qrels_rel_level_reads_with_a_grade_map() -> None:
    from evaluation.formats import parse_grade_map

    lines = [line.split() for line in (ORACLE / "qrels.rel_level").read_text().splitlines()]
    pool = read_qrels(ORACLE / "qrels.rel_level", grade_map=parse_grade_map("-1:0,4:3"))
    mapping = {-1: 0, 4: 3}
    for query, _iteration, doc, grade in lines:
        assert pool[query][doc] == mapping.get(int(grade), int(grade))
