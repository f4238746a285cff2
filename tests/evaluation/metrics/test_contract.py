"""The contract's worked examples E1-E11 and its error cases, to full precision.

Every expected number below is copied from ../shared/evaluation-contract.md. Each example runs
through both paths, the per-query `score_query` and the vectorised `evaluate_run`, which must agree
bit for bit.
"""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.metrics import EvaluationError, Settings, evaluate_run, score_query

POOL = {"A": 3, "B": 2, "C": 1, "D": 0}
POOL5 = {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0}


def both_paths(ranking: list[str], pool: dict[str, Any], settings: Settings) -> tuple[Any, Any]:
    single = score_query(ranking, pool, settings, query_id="q")
    batch = evaluate_run({"q": pool}, {"q": ranking}, settings)
    return single, batch


def test_e1_ndcg_divides_by_the_whole_pools_ideal() -> None:
    single, batch = both_paths(["B", "C"], POOL, Settings(k=2))
    assert single.dcg == 2.6309297535714578
    assert single.idcg == 4.2618595071429155
    assert single.ndcg == 0.617319681505689
    assert batch.dcg[0] == single.dcg and batch.idcg[0] == single.idcg and batch.ndcg[0] == single.ndcg


def test_e1_prime_candidate_only_ideal_is_the_wrong_answer_shown_only_as_a_labelled_contrast() -> None:
    result = score_query(["B", "C"], POOL, Settings(k=2))
    assert result.candidate_only_ndcg == 1.0
    assert result.ndcg != result.candidate_only_ndcg
    # The ideal rows come from the pool: A is the best document even though B,C never retrieved it.
    assert [row.doc_id for row in result.ideal] == ["A", "B"]


@pytest.mark.parametrize(
    ("example", "ranking", "pool", "k", "expected"),
    [
        ("E2", ["A", "B"], POOL, 2, 1.0),
        ("E3", ["B"], POOL, 1, 2 / 3),
        ("E4", [], POOL, 2, 0.0),
        ("E5", ["D"], POOL, 2, 0.0),
        ("E10", ["A", "B", "C", "D", "E"], POOL5, 3, 1.0),
    ],
)
def test_worked_examples_reproduce_exactly(
    example: str, ranking: list[str], pool: dict[str, int], k: int, expected: float
) -> None:
    single, batch = both_paths(ranking, pool, Settings(k=k))
    assert single.ndcg == expected, example
    assert batch.ndcg[0] == expected, example


def test_e4_an_empty_ranking_still_has_the_pools_idcg_and_k_empty_rows() -> None:
    result = score_query([], POOL, Settings(k=2))
    assert result.idcg == 4.2618595071429155
    assert [(row.doc_id, row.contribution) for row in result.positions] == [(None, 0.0), (None, 0.0)]


def test_e3_a_short_list_does_not_shrink_the_ideal() -> None:
    result = score_query(["B"], POOL, Settings(k=2))
    assert result.idcg == 4.2618595071429155
    assert result.positions[1].doc_id is None and result.positions[1].contribution == 0.0


def test_e6_swapping_b_and_c_scores_below_e1() -> None:
    e1 = score_query(["B", "C"], POOL, Settings(k=2))
    e6, batch = both_paths(["C", "B"], POOL, Settings(k=2))
    assert e6.ndcg is not None and e1.ndcg is not None
    assert e6.ndcg < e1.ndcg
    assert batch.ndcg[0] == e6.ndcg


def test_e7_zero_idcg_scores_zero_under_the_zero_policy_and_stays_in_the_mean() -> None:
    single, batch = both_paths(["Z"], {"Z": 0}, Settings(k=1, zero_idcg="zero"))
    assert single.ndcg == 0.0 and single.zero_idcg and not single.excluded
    assert batch.mean == 0.0
    assert batch.counts.zero_idcg == 1 and batch.counts.excluded == 0 and batch.counts.evaluated == 1


def test_e7_zero_idcg_is_left_out_under_the_exclude_policy_but_still_counted() -> None:
    single, batch = both_paths(["Z"], {"Z": 0}, Settings(k=1, zero_idcg="exclude"))
    assert single.ndcg is None and single.excluded
    assert batch.ndcg_of("q") is None
    assert batch.mean is None
    assert batch.counts.queries == 1 and batch.counts.zero_idcg == 1 and batch.counts.excluded == 1
    assert batch.counts.evaluated == 0


def test_e8_macro_mean_and_micro_ratio_are_different_numbers() -> None:
    result = evaluate_run({"q1": {"A": 3}, "q2": {"B": 1}}, {"q1": ["A"], "q2": []}, Settings(k=1))
    assert result.mean == 0.5
    assert result.micro == 0.75


def test_e9_the_help_center_example() -> None:
    single, batch = both_paths(["C", "A", "D", "B", "E"], POOL5, Settings(k=3))
    assert single.dcg == 2.8927892607143724
    assert single.idcg == 4.7618595071429155
    assert single.ndcg == 0.6074915180456525
    assert f"{single.ndcg:.4f}" == "0.6075"
    assert batch.ndcg[0] == single.ndcg


def test_e11_exponential_gain() -> None:
    single, batch = both_paths(["B", "C"], POOL, Settings(k=2, gain="exponential"))
    assert single.ndcg == 0.40830043838009256
    assert batch.ndcg[0] == single.ndcg


def test_the_breakdown_rows_are_the_computation() -> None:
    result = score_query(["B", "C"], POOL, Settings(k=2))
    first, second = result.positions
    assert (first.rank, first.doc_id, first.grade, first.gain, first.discount) == (1, "B", 2, 2.0, 1.0)
    assert second.discount == 1.584962500721156  # log2(3)
    assert second.contribution == 1.0 / second.discount
    assert second.cumulative == result.dcg


def test_k_larger_than_the_pool_sums_over_what_exists() -> None:
    result = score_query(["A", "B"], {"A": 3, "B": 2}, Settings(k=5))
    assert result.ndcg == 1.0
    assert len(result.ideal) == 2
    assert len(result.positions) == 5


# ---- error cases ----------------------------------------------------------------------------------


def test_a_duplicate_id_in_a_ranking_is_refused_naming_it() -> None:
    with pytest.raises(EvaluationError, match=r"'A' appears twice"):
        score_query(["A", "A"], POOL, Settings(k=2), query_id="q")
    with pytest.raises(EvaluationError, match=r"'A' appears twice"):
        evaluate_run({"q": POOL}, {"q": ["A", "A"]}, Settings(k=2))


def test_an_unjudged_id_is_an_error_by_default_naming_query_and_document() -> None:
    with pytest.raises(EvaluationError, match=r"query 'q': document 'X' has no grade") as caught:
        score_query(["X"], POOL, Settings(k=2), query_id="q")
    assert caught.value.query == "q" and caught.value.doc_id == "X"
    with pytest.raises(EvaluationError, match=r"document 'X' has no grade"):
        evaluate_run({"q": POOL}, {"q": ["X"]}, Settings(k=2))


def test_unjudged_as_zero_is_an_explicit_policy_and_is_counted() -> None:
    single, batch = both_paths(["X", "A"], POOL, Settings(k=2, unjudged="zero"))
    assert single.unjudged_in_top_k == 1
    assert single.positions[0].unjudged and single.positions[0].grade is None
    assert batch.counts.unjudged_in_top_k == 1
    assert batch.ndcg[0] == single.ndcg


@pytest.mark.parametrize("k", [0, True, -1, 1.5, "2", None])
def test_k_must_be_a_positive_integer(k: Any) -> None:
    with pytest.raises(EvaluationError, match="K must be a positive integer"):
        Settings(k=k)


@pytest.mark.parametrize("grade", [-1, 1.5, True, "2", 4, None])
def test_grades_must_be_integers_from_0_to_3(grade: Any) -> None:
    with pytest.raises(EvaluationError, match=r"query 'q', document 'A': grade must be an integer 0\.\.3"):
        score_query(["A"], {"A": grade}, Settings(k=1), query_id="q")
    with pytest.raises(EvaluationError, match=r"query 'q', document 'A': grade must be an integer 0\.\.3"):
        evaluate_run({"q": {"A": grade}}, {"q": ["A"]}, Settings(k=1))


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("gain", "log"),
        ("unjudged", "ignore"),
        ("zero_idcg", "one"),
        ("ties", "random"),
        ("missing_queries", "skip"),
        ("extra_queries", "zero"),
        ("seed", -1),
        ("seed", True),
    ],
)
def test_unknown_policies_are_refused_naming_the_allowed_ones(option: str, value: Any) -> None:
    with pytest.raises(EvaluationError, match=option):
        Settings(**{option: value})
