"""recall@K, p@K, rr@K, ap@K and judged@K: worked examples, the policies, and outside oracles.

Oracles: pytrec_eval (`recall_K`, `P_K`, `map_cut_K`, and `recip_rank` on the run cut at K) with
trec_eval's tie rule, ir_measures' `Judged@k` with its own (docid ascending), and under
ties="expected" the plain mean over every order of the tied groups, enumerated.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import ir_measures
import pytest
import pytrec_eval
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import (
    EvaluationError,
    Results,
    Settings,
    evaluate_run,
    metric_at,
    parse_metrics,
)
from tests.evaluation.metrics.test_properties import Case, cases

POOL = {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0}  # the help-center example
SIX = ("ndcg@3", "recall@3", "p@3", "rr@3", "ap@3", "judged@3")


def per_query(result, name: str) -> list[float | None]:  # type: ignore[no-untyped-def]
    metric = next(m for m in result.metrics if m.name == name)
    return list(metric.values(result.scores[name]).per_query[name.split("@")[0]])


def value(ranking: Sequence[str], name: str, **options: object) -> float | None:
    result = evaluate_run({"q": POOL}, {"q": list(ranking)}, Settings(**options), metrics=(name,))  # type: ignore[arg-type]
    return per_query(result, name)[0]


@pytest.mark.parametrize(
    ("ranking", "name", "options", "expected"),
    [
        (["C", "A", "D", "B", "E"], "recall@3", {}, 2 / 3),  # C and A of A, B, C
        (["C", "A", "D", "B", "E"], "recall@3", {"relevant": 2}, 1 / 2),  # A of A, B
        (["C", "A", "D", "B", "E"], "p@3", {}, 2 / 3),
        (["C"], "p@3", {}, 1 / 3),  # a short list still divides by K
        (["D", "E", "B"], "rr@3", {}, 1 / 3),
        (["D", "E", "B"], "rr@2", {}, 0.0),  # the first relevant rank is past K
        (["D", "C", "A"], "rr@3", {"relevant": 3}, 1 / 3),
        (["C", "A", "D", "B", "E"], "ap@3", {}, (1 / 1 + 2 / 2) / 3),
        (["D", "A", "E", "B"], "ap@4", {}, (1 / 2 + 2 / 4) / 3),
        (["A", "X", "B"], "judged@3", {"unjudged": "zero"}, 2 / 3),
        (["A", "X"], "judged@5", {"unjudged": "zero"}, 1 / 2),  # ir_measures: over the 2 shown
        ([], "judged@5", {}, 0.0),
        (["A", "X", "B"], "recall@3", {"unjudged": "zero"}, 2 / 3),  # unjudged counts as not relevant
    ],
)
def test_worked_examples(ranking: list[str], name: str, options: dict[str, object], expected: float) -> None:
    assert value(ranking, name, **options) == pytest.approx(expected, abs=1e-15)


def test_unjudged_error_refuses_the_run_for_every_metric_within_its_own_k() -> None:
    for name in SIX:
        with pytest.raises(EvaluationError, match="document 'X' has no grade in the pool"):
            value(["A", "B", "X"], name)
    # The headline is NDCG@1 here, but recall@3 reaches X: the run is refused all the same.
    with pytest.raises(EvaluationError, match="'X' has no grade"):
        evaluate_run({"q": POOL}, {"q": ["A", "B", "X"]}, Settings(k=1), metrics=("recall@3",))
    # Only the headline's K and the asked-for Ks are read: X below both is never looked at.
    assert value(["A", "B", "X"], "recall@2", k=2) == 2 / 3


def test_the_tie_error_policy_applies_to_the_deepest_metric() -> None:
    scored = {"q": {"A": 3.0, "B": 2.0, "C": 1.0, "D": 1.0}}
    assert evaluate_run({"q": POOL}, scored, Settings(k=2)).mean is not None
    with pytest.raises(EvaluationError, match="share the score 1.0"):
        evaluate_run({"q": POOL}, scored, Settings(k=2), metrics=("p@3",))


def test_a_query_with_no_relevant_document_follows_the_zero_idcg_policy_and_is_counted() -> None:
    pool = {"q1": POOL, "q2": {"Z": 1, "Y": 0}}  # with relevant=2: A, B in q1, nothing in q2
    run = {"q1": ["A"], "q2": ["Z"]}
    for policy, expected in (("zero", [1 / 2, 0.0]), ("exclude", [1 / 2, None])):
        options = Settings(zero_idcg=policy, relevant=2)  # type: ignore[arg-type]
        result = evaluate_run(pool, run, options, metrics=("recall@2", "judged@2"))
        recall = next(m for m in result.metrics if m.name == "recall@2").values(result.scores["recall@2"])
        assert list(recall.per_query["recall"]) == expected
        assert recall.counts["no_relevant"] == 1
        assert recall.counts["excluded"] == (policy == "exclude")
        assert recall.aggregates["mean"] == (1 / 4 if policy == "zero" else 1 / 2)
        # judged@K needs no relevant document: every query is scored, under either policy.
        assert per_query(result, "judged@2") == [1.0, 1.0]


def test_every_value_records_its_definition_in_the_results_shape() -> None:
    settings_ = Settings(k=3, unjudged="zero", ties="docid-asc", relevant=2)
    result = evaluate_run({"q": POOL}, {"q": ["A", "X"]}, settings_, metrics=SIX)
    system = Results.from_engine([result], metrics=result.metrics).system("a")
    assert list(system.metrics) == list(SIX)
    recall = system.metrics["recall@3"]
    assert recall.definition == {
        "metric": "recall@3",
        "label": "Recall@3",
        "measure": "recall_3",
        "settings": {**settings_.full_dict(), "k": 3},
    }
    assert recall.definition["settings"]["relevant"] == 2
    assert next(iter(recall.aggregates)) == "mean"
    document = Results.from_engine([result], metrics=result.metrics).to_dict()
    assert Results.from_dict(document).system("a").metrics["ap@3"] == system.metrics["ap@3"]


def test_ndcg_alone_keeps_its_bytes_and_a_stored_document_without_a_threshold_reads_as_one() -> None:
    result = evaluate_run({"q": POOL}, {"q": ["B", "C"]}, Settings(k=2))
    document = Results.from_engine([result]).to_dict()
    assert "relevant" not in document["settings"]
    assert "definition" not in document["systems"][0]["metrics"]["ndcg"]
    assert Results.from_dict(document).settings == Settings(k=2, relevant=1)
    assert Results.from_dict(document).to_dict() == document
    assert Settings(relevant=2).as_dict()["relevant"] == 2


@pytest.mark.parametrize("ties", ["docid-desc", "docid-asc", "input-order", "expected"])
@settings(max_examples=60, deadline=None)
@given(case=cases(coarse_scores=True), extra=st.integers(0, 5))
def test_ndcg_asked_for_by_name_equals_the_headline_bit_for_bit(case: Case, extra: int, ties: str) -> None:
    # Ordered deeper for another metric, NDCG@K keeps every bit it has alone.
    pool, run = {"q": case.pool}, {"q": dict(zip(case.ranking, case.scores, strict=True))}
    options = Settings(k=case.k, unjudged="zero", ties=ties)  # type: ignore[arg-type]
    alone = evaluate_run(pool, run, options)
    both = evaluate_run(pool, run, options, metrics=(f"ndcg@{case.k}", f"recall@{case.k + extra}"))
    assert both.ndcg.tobytes() == alone.ndcg.tobytes() and both.mean == alone.mean
    assert both.scores[f"ndcg@{case.k}"][1].ndcg.tobytes() == alone.ndcg.tobytes()  # type: ignore[index]


@pytest.mark.parametrize(
    ("specs", "message"),
    [
        (["ndcg"], "write a metric and its cutoff K"),
        (["recall@0"], "the cutoff K must be a positive integer, got 0"),
        (["recall@-1"], "write a metric and its cutoff K"),
        (["recall@1.5"], "write a metric and its cutoff K"),
        (["recall@１０"], "write a metric and its cutoff K"),
        (["map@10"], "unknown metric 'map'"),
        (["p@10", "P@10"], "'p@10' is asked for twice"),
        (["p@10", "p@010"], "'p@10' is asked for twice"),
        ([], "no metric asked for"),
        ("ndcg@10", "got the string 'ndcg@10'"),
        ([10], "got int"),
    ],
)
def test_bad_metric_names_are_refused_clearly(specs: object, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        parse_metrics(specs)  # type: ignore[arg-type]


@pytest.mark.parametrize("relevant", [0, 4, True, 1.5, "2", None])
def test_the_threshold_is_an_integer_from_one_to_three(relevant: object) -> None:
    with pytest.raises(EvaluationError, match="relevance threshold must be an integer 1..3"):
        Settings(relevant=relevant)  # type: ignore[arg-type]


def test_the_threshold_is_part_of_the_settings_two_results_are_compared_under() -> None:
    assert Settings(relevant=2).differences(Settings()) == ["relevant (2 vs 1)"]
    assert metric_at("AP@10").name == "ap@10" and metric_at("ap@10").measure(Settings()) == "map_cut_10"


# ---- Oracles ----


def trec_order(case: Case) -> list[str]:
    """trec_eval's order: score descending, ties by docno descending (code point order)."""
    pairs = sorted(zip(case.ranking, case.scores, strict=True), key=lambda p: (p[1], p[0]), reverse=True)
    return [doc for doc, _score in pairs]


@st.composite
def pooled_runs(draw: st.DrawFn) -> tuple[list[Case], int, int]:
    queries = draw(st.lists(cases(coarse_scores=draw(st.booleans())), min_size=1, max_size=5))
    return queries, draw(st.integers(1, 12)), draw(st.integers(1, 3))


@settings(max_examples=200, deadline=None)
@given(pooled_runs())
def test_every_binary_metric_equals_pytrec_eval(drawn: tuple[list[Case], int, int]) -> None:
    queries, k, relevant = drawn
    pool = {f"q{i}": case.pool for i, case in enumerate(queries)}
    run = {f"q{i}": dict(zip(case.ranking, case.scores, strict=True)) for i, case in enumerate(queries)}
    options = Settings(unjudged="zero", ties="docid-desc", relevant=relevant)
    result = evaluate_run(pool, run, options, metrics=(f"recall@{k}", f"p@{k}", f"ap@{k}", f"rr@{k}"))
    measures = {f"recall.{k}", f"P.{k}", f"map_cut.{k}"}
    whole = pytrec_eval.RelevanceEvaluator(pool, measures, relevance_level=relevant).evaluate(run)
    cut = {
        q: {d: -float(i) for i, d in enumerate(trec_order(c)[:k])} for q, c in zip(pool, queries, strict=True)
    }
    rr = pytrec_eval.RelevanceEvaluator(pool, {"recip_rank"}, relevance_level=relevant).evaluate(cut)
    for name, theirs in (
        ("recall", f"recall_{k}"),
        ("p", f"P_{k}"),
        ("ap", f"map_cut_{k}"),
        ("rr", "recip_rank"),
    ):
        source = rr if name == "rr" else whole
        for query, ours in zip(result.query_ids, per_query(result, f"{name}@{k}"), strict=True):
            # trec_eval scores only a topic that retrieved something; an empty ranking is 0 here.
            expected = source[query][theirs] if query in source else 0.0
            assert ours is not None and abs(ours - expected) <= 1e-12, (name, query)


@settings(max_examples=200, deadline=None)
@given(pooled_runs())
def test_judged_equals_ir_measures(drawn: tuple[list[Case], int, int]) -> None:
    queries, k, _relevant = drawn
    pool = {f"q{i}": case.pool for i, case in enumerate(queries)}
    run = {f"q{i}": dict(zip(case.ranking, case.scores, strict=True)) for i, case in enumerate(queries)}
    # ir_measures' judged provider breaks ties by document ID ascending.
    result = evaluate_run(pool, run, Settings(unjudged="zero", ties="docid-asc"), metrics=(f"judged@{k}",))
    # ir_measures divides by zero on an empty ranking, which is 0 here: it gets the others only.
    answered = {query: docs for query, docs in run.items() if docs}
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ k], pool, answered)}
    for query, ours in zip(result.query_ids, per_query(result, f"judged@{k}"), strict=True):
        assert ours is not None and abs(ours - theirs.get(query, 0.0)) <= 1e-12, query


def plain(name: str, order: Sequence[str], pool: dict[str, int], k: int, relevant: int) -> float:
    """The issue's definitions, written out for one order (the unjudged count as not relevant)."""
    top = order[:k]
    rel = [pool.get(doc, -1) >= relevant for doc in top]
    total = sum(grade >= relevant for grade in pool.values())
    if name == "judged":
        return sum(doc in pool for doc in top) / len(top) if top else 0.0
    if name == "p":
        return sum(rel) / k
    if total == 0:
        return 0.0
    if name == "recall":
        return sum(rel) / total
    if name == "rr":
        return next((1 / (i + 1) for i, r in enumerate(rel) if r), 0.0)
    return sum(sum(rel[: i + 1]) / (i + 1) for i, r in enumerate(rel) if r) / total


def every_order(case: Case) -> list[list[str]]:
    """Every order of the ranking that keeps scores descending (each tied group permuted)."""
    groups = [
        [doc for doc, _ in members]
        for _score, members in itertools.groupby(
            sorted(zip(case.ranking, case.scores, strict=True), key=lambda p: -p[1]), key=lambda p: p[1]
        )
    ]
    return [
        list(itertools.chain(*parts)) for parts in itertools.product(*map(itertools.permutations, groups))
    ]


small_cases: Callable[[], st.SearchStrategy[Case]] = lambda: cases(coarse_scores=True).filter(  # noqa: E731
    lambda c: math.prod(math.factorial(c.scores.count(s)) for s in set(c.scores)) <= 2000
)


def expected_matches_every_order(case: Case, relevant: int, name: str) -> None:
    spec = f"{name}@{case.k}"
    run = {"q": dict(zip(case.ranking, case.scores, strict=True))}
    result = evaluate_run(
        {"q": case.pool}, run, Settings(unjudged="zero", ties="expected", relevant=relevant), metrics=(spec,)
    )
    orders = every_order(case)
    expected = sum(plain(name, order, case.pool, case.k, relevant) for order in orders) / len(orders)
    (ours,) = per_query(result, spec)
    assert ours is not None and abs(ours - expected) <= 1e-12


@pytest.mark.parametrize("name", ["recall", "p", "rr", "ap", "judged"])
@settings(max_examples=80, deadline=None)
@given(case=small_cases(), relevant=st.integers(1, 3))
def test_expected_ties_are_the_mean_over_every_order_of_the_tied_groups(
    case: Case, relevant: int, name: str
) -> None:
    expected_matches_every_order(case, relevant, name)


@pytest.mark.parametrize("name", ["recall", "p", "rr", "ap", "judged"])
@pytest.mark.parametrize(
    ("pool", "ranking", "scores", "k"),
    [
        # Two relevant documents in one tied group, which reaches past K; one unjudged among them.
        ({"a": 1, "b": 2, "c": 0, "d": 3}, ["c", "a", "x", "b", "d"], [2.0, 1.0, 1.0, 1.0, 0.0], 3),
        ({"a": 1, "b": 1, "c": 0}, ["a", "b", "c"], [1.0, 1.0, 1.0], 3),
        ({"a": 0, "b": 1, "c": 1, "d": 1}, ["a", "b", "c", "d"], [5.0, 1.0, 1.0, 1.0], 2),
    ],
)
def test_expected_ties_where_several_tied_members_are_relevant(
    pool: dict[str, int], ranking: list[str], scores: list[float], k: int, name: str
) -> None:
    expected_matches_every_order(Case(pool, ranking, scores, k), 1, name)


def test_the_registry_holds_every_metric_and_a_plain_evaluation_computes_ndcg_only() -> None:
    from evaluation.metrics import ALL_METRICS, METRICS

    assert [m.name for m in ALL_METRICS] == ["ndcg", "recall", "p", "rr", "ap", "judged"]
    assert [m.name for m in METRICS] == ["ndcg"]
    result = evaluate_run({"q": POOL}, {"q": ["A"]}, Settings(k=2))
    assert list(result.scores) == ["ndcg"] and result.metrics == ()
