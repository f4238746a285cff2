"""The paired t-test without scipy.stats: the figures of `scipy.stats.ttest_rel` to the last bit,
None where that test has no answer, and a comparison that never imports scipy.stats."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.metrics import paired_t_test

ROOT = Path(__file__).resolve().parents[3]

# Scores as the metrics give them: in [0, 1], often equal (coarse grades), sometimes tiny apart.
score = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3]),
    st.floats(min_value=0.0, max_value=1.0, allow_nan=False),
)


def scipys(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on degenerate input; the values are compared
        result = stats.ttest_rel(b, a)
    return float(result.statistic), float(result.pvalue)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(score, score), min_size=2, max_size=80))
def test_the_t_test_is_scipys_ttest_rel_to_the_last_bit(pairs: list[tuple[float, float]]) -> None:
    a = np.array([x for x, _ in pairs])
    b = np.array([y for _, y in pairs])
    t, p = paired_t_test(a, b)
    expected = scipys(a, b)
    deltas = b - a
    # No variance (every delta equal), or a spread so small that it underflows (scipy: NaN).
    if bool(np.all(deltas == deltas[0])) or np.isnan(expected[1]):
        assert (t, p) == (None, None)
    else:
        assert (t, p) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([0.2, 0.9], [0.5, 0.4]),  # n = 2: one degree of freedom
        ([0.0, 0.0], [1.0, 0.5]),
        ([0.1, 0.7, 0.3], [0.1, 0.7, 0.4]),  # one delta non-zero
    ],
)
def test_two_and_three_queries_give_scipys_figures(a: list[float], b: list[float]) -> None:
    t, p = paired_t_test(np.array(a), np.array(b))
    assert t is not None and p is not None
    assert (t, p) == scipys(np.array(a), np.array(b))


@pytest.mark.parametrize(
    ("a", "b", "scipy_p_is_nan"),
    [
        ([0.4], [0.9], True),  # n = 1: no degree of freedom
        ([0.3, 0.5, 0.8], [0.3, 0.5, 0.8], True),  # every delta 0
        ([0.0, 0.0, 0.0], [0.5, 0.5, 0.5], False),  # every delta 0.5: scipy's t is infinite, p 0
        ([0.0, 1e-170], [1e-170, 0.0], True),  # deltas apart by less than their squares can hold
    ],
)
def test_no_variance_or_one_query_gives_none_where_scipy_has_no_answer(
    a: list[float], b: list[float], scipy_p_is_nan: bool
) -> None:
    assert paired_t_test(np.array(a), np.array(b)) == (None, None)
    t, p = scipys(np.array(a), np.array(b))
    # What scipy answers there is no test result: NaN, or an infinite t from a zero variance.
    assert np.isnan(p) if scipy_p_is_nan else (np.isinf(t) and p == 0.0)


def test_no_query_gives_none() -> None:
    assert paired_t_test(np.array([]), np.array([])) == (None, None)


def test_comparing_two_runs_does_not_import_scipy_stats() -> None:
    code = (
        "import sys\n"
        "from evaluation.metrics import compare_runs, Settings\n"
        "pool = {f'q{i}': {'d1': i % 4, 'd2': (i + 1) % 4} for i in range(40)}\n"
        "a = {q: ['d1', 'd2'] for q in pool}\n"
        "b = {q: ['d2', 'd1'] for q in pool}\n"
        "c = compare_runs(pool, a, b, Settings(k=2))\n"
        "assert c.t_test_p is not None and c.delta_ci95 is not None\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.strip() == "False"
