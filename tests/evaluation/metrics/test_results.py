"""The one results shape (evaluation/metrics/results.py): round trips, and version 1 still read."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import pytest

from evaluation import metrics
from evaluation.metrics import Results, ResultsVersionError

POOL = {
    "q1": {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0},
    "q2": {"A": 3, "B": 2, "C": 1, "D": 0},
    "q3": {"Z": 0},
    "q4": {"X": 1},
}
RUN_A = {"q1": ["C", "A", "D", "B", "E"], "q2": ["B", "C"], "q3": ["Z"], "q5": ["A"]}
RUN_B = {"q1": ["A", "B", "C", "D", "E"], "q2": ["C", "B", "U"], "q3": ["Z"], "q4": ["X"], "q5": ["A"]}
RUN_C = {"q1": ["B", "C"], "q2": ["A", "B", "C"], "q3": [], "q4": ["X"]}
# One of each case: E9 (q1), a regression with an unjudged ID (q2), a zero-IDCG query excluded
# (q3), a query missing from run A (q4) and a run query not in the pool (q5).
SETTINGS = metrics.Settings(k=3, unjudged="zero", zero_idcg="exclude", extra_queries="ignore")

# Written by the version 1 writer (`results_of` before version 2) for RUN_A vs RUN_B: what every
# comparison stored until then holds. It must keep reading, and reading the same.
V1: dict[str, Any] = {
    "version": 1,
    "query_ids": ["q1", "q2", "q3", "q4"],
    "idcg": [4.7618595071429155, 4.7618595071429155, 0.0, 1.0],
    "zero_idcg": [False, False, True, False],
    "excluded": [False, False, True, False],
    "a": {
        "dcg": [2.8927892607143724, 2.6309297535714578, 0.0, 0.0],
        "ndcg": [0.6074915180456525, 0.5525004989384911, None, 0.0],
        "missing": [False, False, False, True],
        "unjudged": [0, 0, 0, 0],
        "retrieved": [5, 2, 1, 0],
        "mean": 0.3866640056613812,
        "micro": 0.5248827916050821,
        "counts": {
            "queries": 4,
            "evaluated": 3,
            "zero_idcg": 1,
            "excluded": 1,
            "missing_from_run": 1,
            "unjudged_in_top_k": 0,
            "extra_queries_skipped": 1,
        },
        "extra_queries": ["q5"],
    },
    "b": {
        "dcg": [4.7618595071429155, 2.261859507142915, 0.0, 1.0],
        "ndcg": [1.0, 0.4749950106150897, None, 1.0],
        "missing": [False, False, False, False],
        "unjudged": [0, 1, 0, 0],
        "retrieved": [5, 3, 1, 1],
        "mean": 0.8249983368716965,
        "micro": 0.7624413958025411,
        "counts": {
            "queries": 4,
            "evaluated": 3,
            "zero_idcg": 1,
            "excluded": 1,
            "missing_from_run": 0,
            "unjudged_in_top_k": 1,
            "extra_queries_skipped": 1,
        },
        "extra_queries": ["q5"],
    },
    "delta": [0.3925084819543475, -0.07750548832340137, None, 1.0],
    "comparison": {
        "paired": 3,
        "mean_delta": 0.4383343312103154,
        "wins": 2,
        "ties": 0,
        "losses": 1,
        "randomization_p": 0.5,
        "randomization_exact": True,
        "n_permutations": 8,
        "t_statistic": 1.4054050168843866,
        "t_test_p": 0.2951056744047531,
        "delta_ci95": [0.07916583510251492, 1.0],
        "n_resamples": 10000,
        "seed": 0,
    },
}


def engine(*runs: dict[str, list[str]]) -> list[metrics.RunResult]:
    pool = metrics.Pool(POOL)
    named = zip(runs, "甲乙丙", strict=False)
    return [metrics.evaluate_run(pool, run, SETTINGS, name=name) for run, name in named]


def through_json(document: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(document))


def test_two_systems_round_trip_through_json() -> None:
    a, b = engine(RUN_A, RUN_B)
    shape = Results.from_engine([a, b], [metrics.compare_results(a, b)])
    document = through_json(shape.to_dict())
    assert document["version"] == metrics.RESULTS_VERSION == 2
    assert Results.from_dict(document) == shape
    assert Results.from_dict(document).to_dict() == document


def test_three_systems_round_trip_with_two_comparisons() -> None:
    a, b, c = engine(RUN_A, RUN_B, RUN_C)
    shape = Results.from_engine([a, b, c], [metrics.compare_results(a, b), metrics.compare_results(a, c)])
    assert [s.label for s in shape.systems] == ["a", "b", "c"]
    assert [(x.a, x.b) for x in shape.comparisons] == [("a", "b"), ("a", "c")]
    assert Results.from_dict(through_json(shape.to_dict())) == shape
    assert shape.system("c").headline.per_query["ndcg"][2] is None  # q3: excluded
    with pytest.raises(ResultsVersionError, match="two systems"):
        shape.to_dict(version=1)


def test_two_metrics_round_trip_each_with_its_own_columns() -> None:
    a, b = engine(RUN_A, RUN_B)
    shape = Results.from_engine([a, b], [metrics.compare_results(a, b)])
    recall = metrics.MetricValues(
        per_query={"recall": (0.5, 1.0, None, 0.0)}, aggregates={"mean": 0.5}, counts={"evaluated": 3}
    )
    systems = tuple(dataclasses.replace(s, metrics={**s.metrics, "recall": recall}) for s in shape.systems)
    two = dataclasses.replace(shape, systems=systems)
    back = Results.from_dict(through_json(two.to_dict()))
    assert back == two
    assert list(back.system("a").metrics) == ["ndcg", "recall"]
    assert back.system("a").mean == a.mean  # the headline is the first metric


def test_the_registry_starts_with_ndcg() -> None:
    assert [metric.name for metric in metrics.METRICS] == ["ndcg"]
    assert metrics.METRICS[0].measure(SETTINGS) == "ndcg_cut_3"
    assert metrics.METRICS[0].partial == "evaluation/metrics/_ndcg.html"


def test_the_version_1_writer_writes_what_was_always_stored() -> None:
    a, b = engine(RUN_A, RUN_B)
    shape = Results.from_engine([a, b], [metrics.compare_results(a, b)])
    assert through_json(shape.to_dict(version=1)) == V1
    assert json.dumps(shape.to_dict(version=1)) == json.dumps(V1)  # key order too


def test_a_version_1_document_reads_as_the_engine_results_it_was_made_of() -> None:
    a, b = engine(RUN_A, RUN_B)
    fresh = Results.from_engine([a, b], [metrics.compare_results(a, b)])
    stored = Results.from_dict(V1)
    # Version 1 kept neither the run names nor the settings (both are on the model).
    assert stored.settings is None and [s.name for s in stored.systems] == [None, None]
    unnamed = tuple(dataclasses.replace(s, name=None) for s in fresh.systems)
    assert stored == dataclasses.replace(fresh, settings=None, systems=unnamed)
    assert stored.system("a").counts == V1["a"]["counts"]
    stats = stored.comparison("a", "b")
    assert stats is not None and stats.regressions(stored.query_ids) == [("q2", -0.07750548832340137)]
    assert stored.to_dict(version=1) == V1


def test_the_pages_read_model_shows_a_version_1_document_as_before() -> None:
    from evaluation.comparisons import ComparisonResults

    results = ComparisonResults(V1)
    rows = [results.row(i) for i in range(len(results))]
    assert [(r.query_id, r.a_ndcg, r.b_ndcg, r.delta, r.outcome) for r in rows] == [
        ("q1", 0.6074915180456525, 1.0, 0.3925084819543475, "improvement"),
        ("q2", 0.5525004989384911, 0.4749950106150897, -0.07750548832340137, "regression"),
        ("q3", None, None, None, "excluded"),
        ("q4", 0.0, 1.0, 1.0, "improvement"),
    ]
    assert (rows[0].a_dcg, rows[0].idcg, rows[2].zero_idcg, rows[2].excluded) == (
        2.8927892607143724,
        4.7618595071429155,
        True,
        True,
    )
    assert (rows[3].a_missing, rows[1].b_unjudged) == (True, 1)
    assert results.selected() == [1, 0, 3, 2]  # worst regression first, excluded last
    assert results.selected(show="improvements", sort="-delta") == [3, 0]
    assert results.worst_query() == "q2"
    assert results.sorted_deltas() == [-0.07750548832340137, 0.3925084819543475, 1.0]
    assert results.coverage_warning({"unjudged": "zero"})
    assert (results.a.mean, results.b.micro, results.a.counts["missing_from_run"]) == (
        0.3866640056613812,
        0.7624413958025411,
        1,
    )
    assert (results.stats.paired, results.stats.delta_ci95) == (3, (0.07916583510251492, 1.0))


@pytest.mark.parametrize("document", [{"version": 3}, {"query_ids": []}, {"version": "1"}, []])
def test_an_unknown_version_is_refused_with_a_clear_error(document: object) -> None:
    with pytest.raises(ResultsVersionError, match=r"results have version .*; this code reads versions 1, 2"):
        Results.from_dict(document)  # type: ignore[arg-type]


def test_tail_sums_the_positions_after_the_shown_ones() -> None:
    result = metrics.score_query(["C", "A", "D", "B", "E"], POOL["q1"], metrics.Settings(k=5))
    rows = result.positions
    tail = metrics.tail(rows, 2)
    added = rows[-1].cumulative - rows[1].cumulative
    assert tail == metrics.Tail(first=3, last=5, count=3, documents=3, added=added, cumulative=result.dcg)
    assert math.isclose(tail.added, math.fsum(row.contribution for row in rows[2:]))
    assert metrics.tail(rows, 0) == dataclasses.replace(tail, first=1, count=5, documents=5, added=result.dcg)
    assert metrics.tail(rows, 5) is None


def test_tail_counts_the_empty_positions_of_a_short_list() -> None:
    result = metrics.score_query(["B"], POOL["q1"], metrics.Settings(k=4))
    assert metrics.tail(result.positions, 1) == metrics.Tail(
        first=2, last=4, count=3, documents=0, added=0.0, cumulative=result.dcg
    )
