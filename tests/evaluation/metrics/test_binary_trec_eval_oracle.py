"""trec_eval's own test collection (../shared/oracles/trec_eval) as the oracle of the binary metrics.

Every per-topic and `all` value of `P_K`, `recall_K`, `map_cut_K` and `recip_rank` that trec_eval
printed in out.test.aq, out.test.aqc (-c, a missing topic scored 0) and out.test.aql (-l2: a
relevance threshold of 2 on graded judgments) comes out of the engine, rounded to the 4 printed
digits. trec_eval's `recip_rank` has no cutoff: rr@K with K past every ranking.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.formats import parse_grade_map, read_qrels, read_run
from evaluation.metrics import Settings, evaluate_run

ORACLE = Path(__file__).resolve().parents[3] / ".." / "shared" / "oracles" / "trec_eval"
CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
WHOLE = 10_000  # longer than any ranking of the collection
OURS = {"P": "p", "recall": "recall", "map_cut": "ap"}


def printed(name: str) -> dict[tuple[str, str], str]:
    values = {}
    for line in (ORACLE / name).read_text().splitlines():
        measure, topic, value = line.split()
        if measure == "recip_rank" or measure.rsplit("_", 1)[0] in OURS:
            values[(measure, topic)] = value
    return values


def engine_values(qrels: str, run_file: str, relevant: int) -> dict[tuple[str, str], str]:
    grade_map = parse_grade_map("-1:0,4:3") if qrels == "qrels.rel_level" else None
    pool = read_qrels(ORACLE / qrels, grade_map=grade_map)
    requested = [f"{name}@{k}" for name in OURS.values() for k in CUTOFFS] + [f"rr@{WHOLE}"]
    settings = Settings(unjudged="zero", ties="docid-desc", relevant=relevant)
    result = evaluate_run(pool, read_run(ORACLE / run_file), settings, metrics=requested)
    values = {}
    for metric in result.metrics:
        name, k = metric.name.split("@")
        theirs = "recip_rank" if name == "rr" else f"{next(t for t, o in OURS.items() if o == name)}_{k}"
        shape = metric.values(result.scores[metric.name])
        for query, value in zip(result.query_ids, shape.per_query[name], strict=True):
            values[(theirs, query)] = f"{value:.4f}"
        values[(theirs, "all")] = f"{shape.aggregates['mean']:.4f}"
    return values


@pytest.mark.parametrize(
    ("expected", "qrels", "run", "relevant"),
    [
        ("out.test.aq", "qrels.test", "results.test", 1),
        ("out.test.aqc", "qrels.test", "results.trunc", 1),
        ("out.test.aql", "qrels.rel_level", "results.test", 2),
    ],
)
def test_every_binary_measure_trec_eval_printed_is_reproduced(
    expected: str, qrels: str, run: str, relevant: int
) -> None:
    wanted = printed(expected)
    assert len(wanted) == 4 * (3 * len(CUTOFFS) + 1)  # three topics and `all`
    assert engine_values(qrels, run, relevant) == wanted


def test_the_threshold_changes_the_numbers_on_graded_judgments() -> None:
    # Without -l2 the same graded file counts grade 1 as relevant too: a different figure.
    assert engine_values("qrels.rel_level", "results.test", 1) != printed("out.test.aql")
