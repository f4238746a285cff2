"""`manage.py evaluate QRELS RUN [RUN ...] --metrics ... [--baseline LABEL]`: every metric of every
run, every pair compared with Holm-adjusted p-values, in the documented JSON interface, a table
per metric in text; and bad options refused with one line and status 2."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management.base import CommandError
from statsmodels.stats.multitest import multipletests

from tests.evaluation.test_evaluate_command import (
    ORACLE,
    QRELS,
    RESULTS,
    TREC_EVAL,
    TRUNC,
    evaluate,
    evaluate_json,
    manage,
)

GOLDEN = Path(__file__).resolve().parent / "golden"
SMALL_QRELS, SMALL_A, SMALL_B = (str(GOLDEN / name) for name in ("small.qrels", "small-a.run", "small-b.run"))
SIX = "ndcg@10,recall@100,p@10,rr@10,ap@100,judged@10"
PAIR_KEYS = [
    "a",
    "b",
    "metric",
    "mean_delta",
    "wins",
    "ties",
    "losses",
    "randomization_p",
    "holm_p",
    "t_test_p",
    "delta_ci95",
]


@pytest.fixture(scope="module")
def three() -> dict[str, Any]:
    """results.test, results.trunc and the small run (its queries skipped) on the six metrics."""
    args = (QRELS, RESULTS, TRUNC, SMALL_A, *TREC_EVAL, "--extra-queries", "ignore", "--metrics", SIX)
    return evaluate_json(*args)


def test_the_json_report_has_the_documented_keys(three: dict[str, Any]) -> None:
    assert list(three) == [
        "settings",
        "design",
        "metrics",
        "definitions",
        "runs",
        "counts",
        "means",
        "per_query",
        "pairs",
    ]
    assert three["metrics"] == SIX.split(",")
    assert three["runs"] == [
        {"label": "a", "name": "results.test"},
        {"label": "b", "name": "results.trunc"},
        {"label": "c", "name": "small-a.run"},
    ]
    assert three["design"] == {
        "pairing": "all-pairs",
        "baseline": None,
        "family": "pairs-x-metrics",
        "correction": "holm",
        "adjusted": "randomization_p",
    }
    assert three["settings"]["depth"] == 100 and three["settings"]["relevant"] == 1
    assert three["definitions"]["recall@100"]["measure"] == "recall_100"
    assert [q["query"] for q in three["per_query"]] == ["301", "302", "303"]
    assert all(list(q) == ["query", "a", "b", "c"] for q in three["per_query"])
    assert all(list(q["a"]) == SIX.split(",") for q in three["per_query"])
    assert [(p["a"], p["b"]) for p in three["pairs"][:3]] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert len(three["pairs"]) == 3 * 6 and all(list(p) == PAIR_KEYS for p in three["pairs"])


def test_the_values_are_trec_evals(three: dict[str, Any]) -> None:
    measures = {"ndcg_cut_10": "ndcg@10", "P_10": "p@10", "recall_100": "recall@100", "map_cut_100": "ap@100"}
    expected: dict[tuple[str, str], str] = {}
    for line in (ORACLE / "out.test.aq").read_text().splitlines():
        measure, topic, value = line.split()
        if measure in measures:
            expected[measures[measure], topic] = value
    for (metric, topic), value in expected.items():
        if topic == "all":
            assert f"{three['means']['a'][metric]:.4f}" == value
        else:
            entry = next(q for q in three["per_query"] if q["query"] == topic)
            assert f"{entry['a'][metric]:.4f}" == value


def test_holm_p_is_statsmodels_over_every_pair_and_metric(three: dict[str, Any]) -> None:
    raw = [p["randomization_p"] for p in three["pairs"]]
    assert [p["holm_p"] for p in three["pairs"]] == multipletests(np.array(raw), method="holm")[1].tolist()


def test_per_metric_families_are_adjusted_apart() -> None:
    document = evaluate_json(QRELS, RESULTS, TRUNC, SMALL_A, *TREC_EVAL, "--extra-queries", "ignore",
                             "--metrics", "ndcg@10,p@10", "--family", "pairs-per-metric")  # fmt: skip
    assert document["design"]["family"] == "pairs-per-metric"
    for metric in ("ndcg@10", "p@10"):
        pairs = [p for p in document["pairs"] if p["metric"] == metric]
        raw = np.array([p["randomization_p"] for p in pairs])
        assert [p["holm_p"] for p in pairs] == multipletests(raw, method="holm")[1].tolist()


def test_a_pair_of_the_n_has_the_two_run_reports_figures(three: dict[str, Any]) -> None:
    two = evaluate_json(QRELS, RESULTS, TRUNC, *TREC_EVAL)["comparison"]
    pair = next(p for p in three["pairs"] if (p["a"], p["b"], p["metric"]) == ("a", "b", "ndcg@10"))
    assert {key: pair[key] for key in two} == two


def test_against_a_baseline_each_other_run_minus_the_baseline() -> None:
    document = evaluate_json(QRELS, RESULTS, TRUNC, *TREC_EVAL, "--metrics", "ndcg@10", "--baseline", "b")
    two = evaluate_json(QRELS, RESULTS, TRUNC, *TREC_EVAL)["comparison"]
    (pair,) = document["pairs"]
    assert (pair["a"], pair["b"]) == ("b", "a")
    assert pair["mean_delta"] == -two["mean_delta"]
    assert (pair["wins"], pair["losses"]) == (two["losses"], two["wins"])
    assert document["design"]["pairing"] == "baseline" and document["design"]["baseline"] == "b"


def test_an_excluded_query_is_null_and_the_relevance_threshold_is_recorded() -> None:
    document = evaluate_json(SMALL_QRELS, SMALL_A, SMALL_B, "--ties", "expected", "--zero-idcg", "exclude",
                             "--metrics", "ndcg@3,recall@3,judged@3", "--relevant", "2")  # fmt: skip
    q2 = next(q for q in document["per_query"] if q["query"] == "q2")
    # q2's pool holds no grade above 0: excluded, except judged@K, which needs no relevant document.
    assert q2["a"] == {"ndcg@3": None, "recall@3": None, "judged@3": 1.0}
    assert document["settings"]["relevant"] == 2
    assert document["definitions"]["recall@3"]["settings"]["relevant"] == 2
    assert document["counts"]["metrics"]["recall@3"]["excluded"] == 1
    # q1 of run a holds d2 (2) and d1 (3) in its top 3, not d4 (1): all of R at 2, 2 of 3 at 1.
    q1 = next(q for q in document["per_query"] if q["query"] == "q1")
    assert q1["a"]["recall@3"] == 1.0
    default = evaluate_json(SMALL_QRELS, SMALL_A, SMALL_B, "--ties", "expected", "--metrics", "recall@3")
    assert next(q for q in default["per_query"] if q["query"] == "q1")["a"]["recall@3"] == 2 / 3


def test_the_text_report_prints_a_table_per_metric_with_a_column_per_run() -> None:
    text = evaluate(QRELS, RESULTS, TRUNC, SMALL_A, *TREC_EVAL, "--extra-queries", "ignore", "--metrics", SIX)
    for metric, measure in zip(SIX.split(","), ["ndcg_cut_10", "recall_100", "P_10"], strict=False):
        assert f"# {metric} ({measure})" in text
    lines = text.splitlines()
    start = lines.index("# ndcg@10 (ndcg_cut_10)")
    assert lines[start + 1].split() == ["query", "a", "b", "c"]
    assert lines[start + 2].split() == ["301", "0.1518", "0.1518", "0.0000"]  # trec_eval's 301 for a
    assert lines[start + 5].split()[:2] == ["mean", "0.3016"]
    assert "Holm over pairs x metrics (18 tests)" in text


def test_the_text_report_says_when_a_result_is_not_significant_after_correction(tmp_path: Path) -> None:
    # 12 queries where b beats a clearly, c equals a on all but one: raw p small for b, Holm larger.
    qrels = tmp_path / "q.qrels"
    qrels.write_text("".join(f"q{i} 0 good 1\nq{i} 0 bad 0\n" for i in range(12)))
    runs = []
    for name, good_first in (("a", set()), ("b", set(range(6))), ("c", {0})):
        path = tmp_path / f"{name}.run"
        order = lambda i, g=good_first: ["good", "bad"] if i in g else ["bad", "good"]  # noqa: E731
        path.write_text(
            "".join(
                f"q{i} Q0 {d} {r + 1} {2 - r} {name}\n" for i in range(12) for r, d in enumerate(order(i))
            )
        )
        runs.append(str(path))
    document = evaluate_json(str(qrels), *runs, "--metrics", "rr@2,p@1")
    flagged = [p for p in document["pairs"] if p["randomization_p"] < 0.05 <= p["holm_p"]]
    text = evaluate(str(qrels), *runs, "--metrics", "rr@2,p@1")
    assert flagged  # the data were chosen for it
    for pair in flagged:
        assert f"{pair['b']} - {pair['a']}: p < 0.05, not significant after correction" in text


def test_the_csv_report_has_the_sections_then_a_column_per_run_and_metric() -> None:
    text = evaluate(QRELS, RESULTS, TRUNC, *TREC_EVAL, "--metrics", "ndcg@10,p@10", "--format", "csv")
    lines = text.splitlines()
    sections = [line.split(" ", 2)[1] for line in lines[1:] if line.startswith("# ")]
    assert sections == ["settings", "design", "metrics", "definitions", "runs", "counts", "means", "pairs"]
    table = list(csv.reader(io.StringIO("\n".join(line for line in lines if not line.startswith("#")))))
    assert table[0] == ["query_id", "a_ndcg@10", "a_p@10", "b_ndcg@10", "b_p@10"]
    assert table[1][:3] == ["301", repr(0.15176219107803537), "0.2"]


def test_three_runs_without_metrics_compare_ndcg_at_k() -> None:
    document = evaluate_json(
        QRELS, RESULTS, TRUNC, SMALL_A, *TREC_EVAL, "--extra-queries", "ignore", "--k", "5"
    )
    assert document["metrics"] == ["ndcg@5"] and document["settings"]["depth"] == 5


def test_the_shell_and_djangos_command_print_the_same_n_run_report() -> None:
    args = (QRELS, RESULTS, TRUNC, *TREC_EVAL, "--metrics", "ndcg@10,rr@10", "--format", "json")
    shell = manage(*args)
    assert shell.returncode == 0, shell.stderr
    assert shell.stdout == evaluate(*args)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--metrics", "ndcg@10,mrr@10"),
            "metric 'mrr@10': unknown metric 'mrr'; the metrics are ndcg@K, recall@K, p@K, rr@K, ap@K, "
            "judged@K",
        ),
        (("--metrics", "p@0"), "metric 'p@0': the cutoff K must be a positive integer, got 0"),
        (("--metrics", "recall"), "metric 'recall': write a metric and its cutoff K"),
        (("--metrics", "p@10,p@10"), "metric 'p@10' is asked for twice"),
        (
            (TRUNC, "--", "--metrics", "p@10", "--baseline", "d"),
            "--baseline 'd' is not a run's label; the runs are labelled a, b, in argument order",
        ),
        (("--metrics", "p@10", "--relevant", "5"), "the relevance threshold must be an integer 1..3"),
        (("--baseline", "a"), "--baseline 'a' needs two or more runs to compare; one run was given"),
        (("--metrics", "p@10", "--k", "10"), "with --metrics write each metric's cutoff in its name"),
        (
            (TRUNC, "--", "--metrics", "p@10", "--breakdown"),
            "--breakdown shows the NDCG terms of one or two runs",
        ),
        ((TRUNC, RESULTS, "--", "--metrics", "p@10"), "runs a and c are the same file"),
        (("--family", "all"), "argument --family: invalid choice: 'all'"),
    ],
)
def test_bad_options_exit_2_with_one_line_naming_the_value(args: tuple[str, ...], message: str) -> None:
    """`args`: further runs, then "--" and the options (runs come before options, as argparse reads them)."""
    runs, options = (args[: args.index("--")], args[args.index("--") + 1 :]) if "--" in args else ((), args)
    result = manage(QRELS, RESULTS, *runs, *TREC_EVAL, *options)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message in result.stderr


def test_bad_options_through_call_command_are_a_command_error_with_status_2() -> None:
    with pytest.raises(CommandError, match="unknown metric 'mrr'") as raised:
        evaluate(QRELS, RESULTS, TRUNC, "--metrics", "mrr@10")
    assert raised.value.returncode == 2


def test_the_readmes_worked_example_is_what_the_command_prints() -> None:
    readme = (Path(__file__).resolve().parents[2] / "evaluation" / "README.md").read_text()
    section = readme[readme.index("**Worked example**") :]
    start = section.index("```\nRuns: ") + len("```\n")  # the block after the command's
    printed = section[start : section.index("...\n", start)]
    text = evaluate(
        SMALL_QRELS, SMALL_A, SMALL_B, str(GOLDEN / "small-c.run"), "--ties", "docid-desc",
        "--zero-idcg", "exclude", "--metrics", "ndcg@3,recall@3,rr@3", "--baseline", "a",
    )  # fmt: skip
    assert printed.startswith("Runs: a=small-a.run") and text.startswith(printed)
