"""Each policy does what its name says, on both paths, and is recorded with the result."""

from __future__ import annotations

from itertools import permutations
from statistics import fmean

import pytest

from evaluation.formats import parse_grade_map
from evaluation.metrics import EvaluationError, Pool, Run, Settings, evaluate_run, score_query
from evaluation.metrics.policies import MAX_BREAKDOWN_K

POOL = {"A": 3, "B": 2, "C": 1, "D": 0}


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_expected_ties_average_the_dcg_of_every_order_of_the_tied_group(k: int) -> None:
    # D first, then B, C and A tied: the tied group straddles K for k = 2 and 3.
    docs, scores = ["D", "B", "C", "A"], [9.0, 5.0, 5.0, 5.0]
    settings = Settings(k=k, ties="expected")
    expected = score_query(docs, POOL, settings, scores=scores)
    orders = [["D", *tail] for tail in permutations(["B", "C", "A"])]
    average = fmean(score_query(order, POOL, Settings(k=k)).dcg for order in orders)
    assert expected.dcg == pytest.approx(average, rel=1e-12)
    batch = evaluate_run({"q": POOL}, Run.from_scores({"q": list(zip(docs, scores, strict=True))}), settings)
    assert batch.dcg[0] == expected.dcg
    assert [row.tied for row in expected.positions] == [1, 3, 3, 3][:k]


def test_the_deterministic_tie_rules_pick_their_order() -> None:
    docs, scores = ["B", "A", "C"], [1.0, 1.0, 0.5]

    def top(ties: str) -> list[str | None]:
        result = score_query(docs, POOL, Settings(k=2, ties=ties), scores=scores)  # type: ignore[arg-type]
        return [row.doc_id for row in result.positions]

    assert top("docid-desc") == ["B", "A"]
    assert top("docid-asc") == ["A", "B"]
    assert top("input-order") == ["B", "A"]
    with pytest.raises(EvaluationError, match="documents 'B', 'A' share the score 1.0 at ranks 1-2"):
        top("error")


def test_scores_order_a_run_and_the_rank_column_does_not() -> None:
    run = Run.from_scores({"q": [("C", 0.1), ("A", 0.9), ("B", 0.5)]})
    result = evaluate_run({"q": POOL}, run, Settings(k=3))
    assert [row.doc_id for row in result.explain("q").positions] == ["A", "B", "C"]
    assert result.ndcg[0] == 1.0


def test_a_run_query_outside_the_pool_is_an_error_naming_it_unless_ignored() -> None:
    run = {"q": ["A"], "stray": ["A"]}
    with pytest.raises(EvaluationError, match="query 'stray' of run 'run' is not in the pool"):
        evaluate_run({"q": POOL}, run, Settings(k=1))
    result = evaluate_run({"q": POOL}, run, Settings(k=1, extra_queries="ignore"))
    assert result.extra_queries == ("stray",)
    assert result.counts.extra_queries_skipped == 1
    assert result.query_ids == ("q",) and result.ndcg[0] == 1.0


def test_a_pool_query_missing_from_the_run_scores_zero_and_is_counted_unless_refused() -> None:
    pool = {"q1": POOL, "q2": POOL}
    result = evaluate_run(pool, {"q1": ["A", "B"]}, Settings(k=2))
    assert result.ndcg.tolist() == [1.0, 0.0]
    assert result.mean == 0.5
    assert result.counts.missing_from_run == 1 and result.missing.tolist() == [False, True]
    assert result.explain("q2").missing_from_run
    with pytest.raises(EvaluationError, match="pool query 'q2' is missing from run 'run'"):
        evaluate_run(pool, {"q1": ["A", "B"]}, Settings(k=2, missing_queries="error"))


def test_every_result_carries_its_settings() -> None:
    settings = Settings(
        k=3, gain="exponential", unjudged="zero", zero_idcg="exclude", ties="docid-asc", seed=5
    )
    result = evaluate_run({"q": POOL}, {"q": ["A"]}, settings)
    assert result.settings == settings
    assert result.explain("q").settings == settings
    assert settings.as_dict() == {
        "k": 3,
        "gain": "exponential",
        "unjudged": "zero",
        "zero_idcg": "exclude",
        "ties": "docid-asc",
        "missing_queries": "zero",
        "extra_queries": "error",
        "seed": 5,
    }
    assert len(settings.describe()) == 8


def test_unjudged_ids_below_k_never_enter_the_score() -> None:
    result = score_query(["A", "X"], POOL, Settings(k=1), query_id="q")
    assert result.ndcg == 1.0 and result.unjudged_in_top_k == 0


def test_settings_from_a_mapping_take_the_settings_and_ignore_other_keys() -> None:
    values = {"k": 3, "gain": "exponential", "seed": 7, "verbosity": 1, "qrels": "x.qrels"}
    settings = Settings.from_mapping(values)
    assert settings == Settings(k=3, gain="exponential", seed=7)
    assert Settings.from_mapping({}) == Settings()


def test_settings_from_a_mapping_are_validated_like_any_settings() -> None:
    with pytest.raises(EvaluationError):
        Settings.from_mapping({"k": 0})


def test_library_calls_with_the_wrong_kind_of_argument_are_evaluation_errors() -> None:
    pool = Pool({"q": {"A": 3, "B": 1}})
    run = Run.from_rankings({"q": ["A", "B"]})
    for call, message in (
        (lambda: Pool(None), "a pool must be a mapping"),  # type: ignore[arg-type]
        (lambda: evaluate_run(pool, None), "a run must be a Run or a mapping"),  # type: ignore[arg-type]
        (lambda: evaluate_run(pool, run, 3), "settings must be a Settings"),  # type: ignore[arg-type]
        (lambda: evaluate_run(pool, run, {"k": 2, "gian": "linear"}), "unknown settings gian"),
        (lambda: score_query(["A"], None), "the pool's grades must be a mapping"),  # type: ignore[arg-type]
        (lambda: score_query(None, {"A": 3}), "a ranking must be a sequence of document IDs"),  # type: ignore[arg-type]
        # A string is a sequence of characters: "BA" must not become the ranking ['B', 'A'].
        (
            lambda: score_query("BA", {"A": 3, "B": 1}),
            "a ranking must be a sequence of document IDs, got str",
        ),
        (lambda: parse_grade_map({4: 3}), "a grade map is text"),  # type: ignore[arg-type]
    ):
        with pytest.raises(EvaluationError, match=message):
            call()
    # A mapping of settings is taken as Settings.from_mapping would take it.
    assert evaluate_run(pool, run, {"k": 1}).mean == evaluate_run(pool, run, Settings(k=1)).mean == 1.0


def test_a_breakdown_beyond_its_k_limit_is_refused_but_scores_are_not() -> None:
    pool = Pool({"q": {"A": 3}})
    run = Run.from_rankings({"q": ["A"]})
    huge = Settings(k=MAX_BREAKDOWN_K + 1)
    assert evaluate_run(pool, run, Settings(k=10**20)).mean == 1.0
    with pytest.raises(EvaluationError, match="K may be at most 10000 for it, got 10001"):
        evaluate_run(pool, run, huge).explain("q")
    assert len(score_query(["A"], {"A": 3}, Settings(k=MAX_BREAKDOWN_K)).positions) == MAX_BREAKDOWN_K
