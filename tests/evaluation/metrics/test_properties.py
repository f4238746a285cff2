"""Property tests against outside oracles: scikit-learn's ndcg_score and pytrec_eval (trec_eval).

Random pools and rankings, including unjudged IDs, short lists, K beyond the pool, tied scores
and non-ASCII IDs (trec_eval compares docnos byte-wise, which for UTF-8 is code point order).
"""

from __future__ import annotations

from dataclasses import dataclass

import pytrec_eval
from hypothesis import event, given, settings
from hypothesis import strategies as st
from sklearn.metrics import ndcg_score

from evaluation.metrics import EvaluationError, Run, Settings, evaluate_run, order_scored, score_query
from evaluation.metrics.policies import Gain

EXAMPLES = settings(max_examples=150, deadline=None)
JUDGED_IDS = ["a", "b", "c", "d", "e", "f", "g", "h", "B", "Z9", "文档甲", "文档乙", "ä"]
UNJUDGED_IDS = ["x", "y", "未判", "Y"]


@dataclass
class Case:
    pool: dict[str, int]
    ranking: list[str]
    scores: list[float]
    k: int


@st.composite
def cases(draw: st.DrawFn, *, coarse_scores: bool = False, unjudged: bool = True) -> Case:
    docs = draw(st.lists(st.sampled_from(JUDGED_IDS), min_size=1, max_size=10, unique=True))
    grades = draw(st.lists(st.integers(0, 3), min_size=len(docs), max_size=len(docs)))
    pool = dict(zip(docs, grades, strict=True))
    extra = draw(st.lists(st.sampled_from(UNJUDGED_IDS), max_size=3, unique=True)) if unjudged else []
    shuffled = draw(st.permutations(docs + extra))
    ranking = shuffled[: draw(st.integers(0, len(shuffled)))]
    if coarse_scores:  # few distinct values: ties are common
        scores = [
            float(s) for s in draw(st.lists(st.integers(0, 3), min_size=len(ranking), max_size=len(ranking)))
        ]
    else:
        scores = [float(len(ranking) - i) for i in range(len(ranking))]
    return Case(pool, ranking, scores, draw(st.integers(1, 12)))


def sklearn_ndcg(case: Case, *, gain: str = "linear", scores: list[float] | None = None) -> float:
    """ndcg_score with the whole pool as its ideal.

    sklearn ranks every column by y_score. Columns: the ranked documents (highest scores, unjudged
    ones with relevance 0), then zero-relevance fillers up to position K (a short list's empty
    positions add 0), then the pool documents the ranking missed, below everything and so beyond
    K: they enter sklearn's ideal (the sorted y_true) but not its DCG@K, exactly like ours.
    """
    g = (lambda r: r) if gain == "linear" else (lambda r: 2**r - 1)
    y_true: list[float] = []
    y_score: list[float] = []
    ranked_scores = (
        scores if scores is not None else [float(len(case.ranking) - i) for i in range(len(case.ranking))]
    )
    for doc, score in zip(case.ranking, ranked_scores, strict=True):
        y_true.append(g(case.pool.get(doc, 0)))
        y_score.append(1000.0 + score)
    for j in range(max(0, case.k - len(case.ranking))):
        y_true.append(0)
        y_score.append(999.0 - j)
    for doc, grade in case.pool.items():
        if doc not in case.ranking:
            y_true.append(g(grade))
            y_score.append(-1.0)
    if len(y_true) < 2:  # sklearn refuses a single document
        y_true.append(0)
        y_score.append(-2.0)
    return float(ndcg_score([y_true], [y_score], k=case.k))


@EXAMPLES
@given(cases(), st.sampled_from(["linear", "exponential"]))
def test_ndcg_equals_scikit_learns_with_the_whole_pool_as_ideal(case: Case, gain: Gain) -> None:
    ours = score_query(case.ranking, case.pool, Settings(k=case.k, gain=gain, unjudged="zero"))
    assert ours.ndcg is not None
    assert abs(ours.ndcg - sklearn_ndcg(case, gain=gain)) <= 1e-9


@EXAMPLES
@given(cases(coarse_scores=True))
def test_expected_ties_equal_scikit_learns_tie_averaging(case: Case) -> None:
    ours = score_query(
        case.ranking, case.pool, Settings(k=case.k, unjudged="zero", ties="expected"), scores=case.scores
    )
    assert ours.ndcg is not None
    assert abs(ours.ndcg - sklearn_ndcg(case, scores=case.scores)) <= 1e-9


@EXAMPLES
@given(cases(coarse_scores=True))
def test_ndcg_cut_equals_pytrec_eval_with_unjudged_zero_and_docid_descending_ties(case: Case) -> None:
    ours = score_query(
        case.ranking, case.pool, Settings(k=case.k, unjudged="zero", ties="docid-desc"), scores=case.scores
    )
    measure = f"ndcg_cut.{case.k}"
    evaluator = pytrec_eval.RelevanceEvaluator({"q": case.pool}, {measure})
    answer = evaluator.evaluate({"q": dict(zip(case.ranking, case.scores, strict=True))})
    # trec_eval only scores a topic that retrieved something; an empty ranking is 0 for us.
    theirs = answer["q"][measure.replace(".", "_")] if case.ranking else 0.0
    assert ours.ndcg is not None
    assert abs(ours.ndcg - theirs) <= 1e-9


@EXAMPLES
@given(cases(coarse_scores=True), st.sampled_from(["docid-desc", "docid-asc", "input-order", "expected"]))
def test_the_tie_policies_order_by_score_then_by_their_rule(case: Case, ties: str) -> None:
    pairs = list(zip(case.ranking, case.scores, strict=True))
    ordered = order_scored(pairs, ties)  # type: ignore[arg-type]
    assert sorted(ordered) == sorted(pairs)
    for (doc1, score1), (doc2, score2) in zip(ordered, ordered[1:], strict=False):
        assert score1 >= score2
        if score1 == score2:
            if ties == "docid-desc":
                assert doc1 > doc2
            elif ties in ("docid-asc", "expected"):
                assert doc1 < doc2
            else:
                assert pairs.index((doc1, score1)) < pairs.index((doc2, score2))


def test_the_error_tie_policy_names_the_query_and_the_tied_documents() -> None:
    try:
        order_scored([("d1", 2.0), ("d2", 1.0), ("d3", 1.0)], "error", query_id="q7")
    except EvaluationError as error:
        assert (
            "query 'q7'" in str(error) and "'d2', 'd3'" in str(error) and "share the score 1.0" in str(error)
        )
    else:
        raise AssertionError("tied scores were accepted under ties='error'")
    # A tie entirely below K cannot change NDCG@K, so it is not an error there.
    assert order_scored([("d1", 2.0), ("d2", 1.0), ("d3", 1.0)], "error", k=1)[0] == ("d1", 2.0)


@st.composite
def runs(draw: st.DrawFn) -> tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, float]]], bool]:
    queries = draw(st.lists(cases(coarse_scores=draw(st.booleans())), min_size=1, max_size=6))
    pool = {f"q{i}": case.pool for i, case in enumerate(queries)}
    scored = {
        f"q{i}": list(zip(case.ranking, case.scores, strict=True))
        for i, case in enumerate(queries)
        if draw(st.booleans()) or i == 0  # some pool queries are missing from the run
    }
    return pool, scored, draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(
    runs(),
    st.integers(1, 12),
    st.sampled_from(["linear", "exponential"]),
    st.sampled_from(["error", "zero"]),
    st.sampled_from(["error", "docid-desc", "docid-asc", "input-order", "expected"]),
    st.sampled_from(["zero", "exclude"]),
)
def test_the_batch_engine_agrees_with_the_per_query_path(
    data: tuple[dict[str, dict[str, int]], dict[str, list[tuple[str, float]]], bool],
    k: int,
    gain: str,
    unjudged: str,
    ties: str,
    zero_idcg: str,
) -> None:
    pool, scored, with_scores = data
    config = Settings(k=k, gain=gain, unjudged=unjudged, ties=ties, zero_idcg=zero_idcg)  # type: ignore[arg-type]
    run = (
        Run.from_scores(scored)
        if with_scores
        else Run.from_rankings({q: [d for d, _ in r] for q, r in scored.items()})
    )
    singles = {}
    single_error = None
    for query in pool:
        try:
            singles[query] = score_query(
                run.ranking(query), pool[query], config, scores=run.scores_of(query), query_id=query
            )
        except EvaluationError as error:
            single_error = error
    try:
        batch = evaluate_run(pool, run, config)
    except EvaluationError:
        event("refused by both paths")
        assert single_error is not None
        return
    event("scored by both paths")
    assert single_error is None
    for i, query in enumerate(batch.query_ids):
        single = singles[query]
        assert abs(batch.dcg[i] - single.dcg) <= 1e-12
        assert abs(batch.idcg[i] - single.idcg) <= 1e-12
        assert batch.ndcg_of(query) == single.ndcg or abs(batch.ndcg[i] - single.ndcg) <= 1e-12  # type: ignore[operator]
        assert batch.unjudged[i] == single.unjudged_in_top_k
        assert batch.explain(query).dcg == single.dcg
    assert batch.counts.missing_from_run == sum(q not in scored for q in pool)
