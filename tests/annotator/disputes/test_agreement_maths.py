"""The agreement figures, without a database: hand-computed values, published examples, oracles.

Oracles: scikit-learn's `cohen_kappa_score` for kappa; for alpha, Krippendorff's own worked
example (2011, "Computing Krippendorff's Alpha-Reliability": 4 observers, 12 units, missing data)
and an independent, deliberately plain implementation of the coincidence-matrix formula below.
"""

from __future__ import annotations

import math
import subprocess
import sys
from itertools import combinations, permutations
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from annotator.disputes import agreement
from annotator.disputes.agreement import (
    NO_PAIRS,
    NO_VARIATION,
    TOO_FEW_ITEMS,
    agreement_report,
    alpha_by_group,
    check_grade,
    cohen_kappa_quadratic,
    confusion_matrix,
    krippendorff_alpha_ordinal,
    pairwise,
    percent_agreement,
)

ROOT = Path(__file__).resolve().parents[3]

# --- an independent alpha: Krippendorff (2011), section "C", written out loop by loop -------------


def plain_alpha(units: list[list[float]], metric: str, domain: list[float]) -> float:
    """alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck, over pairable values only."""
    o = {(c, k): 0.0 for c in domain for k in domain}
    for values in units:
        m = len(values)
        if m < 2:
            continue
        for i, j in permutations(range(m), 2):
            o[(values[i], values[j])] += 1 / (m - 1)
    n_c = {c: sum(o[(c, k)] for k in domain) for c in domain}
    n = sum(n_c.values())

    def delta2(c: float, k: float) -> float:
        if metric == "nominal":
            return 0.0 if c == k else 1.0
        if metric == "interval":
            return (c - k) ** 2
        lo, hi = sorted((domain.index(c), domain.index(k)))
        between = sum(n_c[domain[g]] for g in range(lo, hi + 1))
        return (between - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(o[(c, k)] * delta2(c, k) for c in domain for k in domain)
    expected = sum(n_c[c] * n_c[k] * delta2(c, k) for c in domain for k in domain)
    return 1 - (n - 1) * observed / expected


# Krippendorff (2011), the 4-observer, 12-unit example with missing values (None).
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def units_of(table: list[list[int | None]]) -> list[list[float]]:
    return [[row[u] for row in table if row[u] is not None] for u in range(len(table[0]))]


@pytest.mark.parametrize(
    ("metric", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_the_plain_alpha_reproduces_krippendorffs_published_example(metric: str, published: float) -> None:
    assert round(plain_alpha(units_of(KRIPPENDORFF_2011), metric, [1, 2, 3, 4, 5]), 3) == published


def test_the_krippendorff_package_gives_the_published_ordinal_alpha_with_a_fixed_value_domain() -> None:
    import krippendorff

    data = [[np.nan if v is None else v for v in row] for row in KRIPPENDORFF_2011]
    value = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
    )
    assert round(value, 3) == 0.815


# A ratings table {unit: {rater: grade}}, 0-3 with missing grades, as the app builds it.
ratings_tables = st.dictionaries(
    keys=st.integers(0, 40),
    values=st.dictionaries(
        keys=st.sampled_from(["ed", "eve", "rita", "olivia"]), values=st.integers(0, 3), min_size=1
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(ratings_tables)
def test_ordinal_alpha_matches_the_plain_coincidence_matrix_formula(ratings: dict) -> None:
    figure = krippendorff_alpha_ordinal(ratings)
    units = [list(map(float, by_rater.values())) for by_rater in ratings.values()]
    pairable = [v for u in units if len(u) >= 2 for v in u]
    if not pairable:
        assert figure.value is None and figure.reason == NO_PAIRS
    elif sum(len(u) >= 2 for u in units) == 1:
        # One unit: the formula gives exactly 0 whatever the grades (observed = expected), or 0/0.
        assert figure.value is None and figure.reason == agreement.ONE_PAIR
        if len(set(pairable)) > 1:
            assert plain_alpha(units, "ordinal", [0.0, 1.0, 2.0, 3.0]) == pytest.approx(0.0, abs=1e-12)
    elif len(set(pairable)) == 1:
        assert figure.value is None and figure.reason == NO_VARIATION
    else:
        assert figure.n == len(pairable)
        assert figure.value == pytest.approx(plain_alpha(units, "ordinal", [0.0, 1.0, 2.0, 3.0]), abs=1e-9)


def test_alpha_by_hand_two_editors_three_pairs() -> None:
    # Pairs (0,0), (1,1), (0,1): n = 6 pairable values, n0 = n1 = 3, one disagreeing pair.
    # With two categories the ordinal distance is the same for every disagreement, so alpha is the
    # nominal one: 1 - (n - 1) * (o01 + o10) / (2 * n0 * n1) = 1 - 5 * 2 / 18 = 4/9.
    figure = krippendorff_alpha_ordinal({1: {"a": 0, "b": 0}, 2: {"a": 1, "b": 1}, 3: {"a": 0, "b": 1}})
    assert figure.value == pytest.approx(4 / 9)
    assert figure.n == 6


def test_alpha_is_perfect_when_every_editor_agrees_and_grades_vary() -> None:
    figure = krippendorff_alpha_ordinal({1: {"a": 3, "b": 3}, 2: {"a": 0, "b": 0, "c": 0}, 3: {"a": 2}})
    assert figure.value == pytest.approx(1.0)


def test_alpha_says_not_enough_data_rather_than_a_number_when_nothing_is_pairable_or_nothing_varies() -> None:
    assert krippendorff_alpha_ordinal({}) == agreement.Figure(None, 0, NO_PAIRS)
    assert krippendorff_alpha_ordinal({1: {"a": 3}, 2: {"b": 1}}) == agreement.Figure(None, 0, NO_PAIRS)
    assert krippendorff_alpha_ordinal({1: {"a": 2, "b": 2}, 2: {"a": 2, "b": 2}}) == agreement.Figure(
        None, 4, NO_VARIATION
    )


# --- kappa ----------------------------------------------------------------------------------------


def test_kappa_by_hand_on_four_items() -> None:
    # a = 0 0 1 1, b = 0 1 1 1. Observed: (0,0)=1 (0,1)=1 (1,1)=2. Row sums 2 2, column sums 1 3:
    # expected (0,0)=.5 (0,1)=1.5 (1,0)=.5 (1,1)=1.5. Weighted (i-j)^2: observed 1, expected 2.
    assert cohen_kappa_quadratic([0, 0, 1, 1], [0, 1, 1, 1]).value == pytest.approx(0.5)


def test_kappa_is_one_for_identical_and_minus_one_for_mirrored_grades() -> None:
    assert cohen_kappa_quadratic([0, 1, 2, 3], [0, 1, 2, 3]).value == pytest.approx(1.0)
    # Mirrored: observed weight 9+1+1+9 = 20; expected is 1/4 of the sum of all 16 weights (40) = 10.
    assert cohen_kappa_quadratic([0, 1, 2, 3], [3, 2, 1, 0]).value == pytest.approx(-1.0)


paired_grades = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=2, max_size=60).filter(
    lambda pairs: len({a for a, _ in pairs}) > 1 and len({b for _, b in pairs}) > 1
)


@settings(max_examples=300, deadline=None)
@given(paired_grades)
def test_kappa_matches_scikit_learn_quadratic_weights_with_labels_0_to_3(
    pairs: list[tuple[int, int]],
) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="quadratic")
    assert cohen_kappa_quadratic(a, b).value == pytest.approx(expected, abs=1e-12)


def test_kappa_says_not_enough_data_for_fewer_than_two_items_or_a_constant_editor() -> None:
    assert cohen_kappa_quadratic([], []).reason == TOO_FEW_ITEMS
    assert cohen_kappa_quadratic([2], [3]).reason == TOO_FEW_ITEMS
    # scikit-learn answers 0.0 here although the editors agree on 2 of 3 items: misleading.
    assert cohen_kappa_score([2, 2, 2], [2, 2, 3], labels=[0, 1, 2, 3], weights="quadratic") == 0.0
    # Not "every grade involved is the same", which the 3 contradicts.
    assert cohen_kappa_quadratic([2, 2, 2], [2, 2, 3]) == agreement.Figure(
        None, 3, agreement.ONE_GRADE_EDITOR
    )
    assert cohen_kappa_quadratic([3, 3], [3, 0]) == agreement.Figure(None, 2, agreement.ONE_GRADE_EDITOR)
    assert cohen_kappa_quadratic([1, 1], [1, 1]) == agreement.Figure(None, 2, NO_VARIATION)


# --- percentages, confusion, pairs, groups ----------------------------------------------------------


def test_percent_agreement_counts_every_pair_of_editors_on_a_unit() -> None:
    # Unit 1: 2 vs 3 (within one). Unit 2: 3, 3, 1 -> comparisons 3=3, 3-1, 3-1: one exact, none near.
    # Unit 3: a single grade, nothing to compare.
    exact, near = percent_agreement({1: {"a": 2, "b": 3}, 2: {"a": 3, "b": 3, "c": 1}, 3: {"a": 0}})
    assert (exact.value, exact.n) == (pytest.approx(1 / 4), 4)
    assert near.value == pytest.approx(2 / 4)


def test_percent_agreement_without_any_pair_is_not_a_number() -> None:
    exact, near = percent_agreement({1: {"a": 2}})
    assert exact.value is None and near.value is None and exact.reason == NO_PAIRS


def test_confusion_matrix_puts_the_first_editor_on_rows() -> None:
    matrix = confusion_matrix([3, 2, 2, 0], [3, 3, 2, 1])
    assert matrix[3][3] == 1 and matrix[2][3] == 1 and matrix[2][2] == 1 and matrix[0][1] == 1
    assert sum(map(sum, matrix)) == 4


def test_pairwise_compares_only_the_units_two_editors_share() -> None:
    ratings = {1: {1: 2, 2: 3}, 2: {1: 0, 2: 0, 3: 1}, 3: {1: 3, 3: 3}, 4: {2: 1}}
    pairs = {(p.rater_a, p.rater_b): p for p in pairwise(ratings)}
    assert set(pairs) == {(1, 2), (1, 3), (2, 3)}
    assert pairs[(1, 2)].shared == 2 and pairs[(1, 2)].exact.value == pytest.approx(0.5)
    assert pairs[(1, 2)].kappa.value == pytest.approx(
        cohen_kappa_score([2, 0], [3, 0], labels=[0, 1, 2, 3], weights="quadratic")
    )
    assert pairs[(2, 3)].shared == 1 and pairs[(2, 3)].kappa.reason == TOO_FEW_ITEMS


def test_alpha_by_group_separates_queries() -> None:
    ratings = {1: {"a": 3, "b": 3}, 2: {"a": 0, "b": 0}, 3: {"a": 3, "b": 0}, 4: {"a": 0, "b": 3}}
    by_group = dict(alpha_by_group(ratings, {1: "clear", 2: "clear", 3: "murky", 4: "murky"}))
    assert by_group["clear"].value == pytest.approx(1.0)
    assert by_group["murky"].value is not None and by_group["murky"].value < 0


def test_the_report_gathers_every_figure() -> None:
    ratings = {1: {1: 2, 2: 3}, 2: {1: 3, 2: 3}, 3: {1: 0, 2: 1}}
    report = agreement_report(ratings, {1: "q1", 2: "q1", 3: "q2"})
    assert (report.units, report.raters, report.grades) == (3, 2, 6)
    assert report.exact.value == pytest.approx(1 / 3) and report.within_one.value == pytest.approx(1.0)
    assert len(report.pairs) == 1 and [g for g, _ in report.alpha_by_group] == ["q1", "q2"]


@pytest.mark.parametrize("bad", [True, 1.5, -1, 4, "2", None])
def test_a_grade_that_is_not_an_integer_0_to_3_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="integer from 0 to 3"):
        check_grade(bad)
    with pytest.raises(ValueError):
        krippendorff_alpha_ordinal({1: {"a": bad, "b": 2}})


def test_the_agreement_module_imports_without_django() -> None:
    code = (
        "import sys, annotator.disputes.agreement; "
        "assert not [m for m in sys.modules if m.startswith('django')]"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr


def test_kappa_on_a_long_sample_matches_scikit_learn() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 2000).tolist()
    b = [min(3, max(0, x + int(rng.integers(-1, 2)))) for x in a]
    value = cohen_kappa_quadratic(a, b).value
    assert value is not None and math.isfinite(value)
    assert value == pytest.approx(
        cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="quadratic"), abs=1e-12
    )


def test_alpha_of_one_pair_is_not_a_number_though_the_package_says_zero() -> None:
    """One pair graded 1 and 2 must not show alpha 0.000 ("chance agreement") from no evidence."""
    one = {1: {"a": 1, "b": 2}, 2: {"a": 3}}
    raw = krippendorff.alpha(
        reliability_data=[[1, 3], [2, np.nan]], level_of_measurement="ordinal", value_domain=[0, 1, 2, 3]
    )
    assert raw == 0.0  # what the package says for one differing pair, whatever the grades
    assert krippendorff_alpha_ordinal(one) == agreement.Figure(None, 2, agreement.ONE_PAIR)
    # Two pairs are enough for a number again.
    assert krippendorff_alpha_ordinal({1: {"a": 1, "b": 2}, 2: {"a": 3, "b": 3}}).value is not None


# --- the arrays agree with the figures' definitions, written out unit by unit ------------------------


def plain_percent(ratings: dict) -> tuple[int, int, int]:
    """(comparisons, exact, within one) over every pair of raters on every unit."""
    comparisons = exact = near = 0
    for by_rater in ratings.values():
        for a, b in combinations(list(by_rater.values()), 2):
            comparisons += 1
            exact += a == b
            near += abs(a - b) <= 1
    return comparisons, exact, near


@settings(max_examples=200, deadline=None)
@given(ratings_tables)
def test_percentages_pairs_and_groups_equal_their_unit_by_unit_definitions(ratings: dict) -> None:
    comparisons, exact, near = plain_percent(ratings)
    got_exact, got_near = percent_agreement(ratings)
    if comparisons:
        assert (got_exact.value, got_near.value, got_exact.n) == (
            exact / comparisons,
            near / comparisons,
            comparisons,
        )
    else:
        assert got_exact.reason == got_near.reason == NO_PAIRS
    for pair in pairwise(ratings):
        shared = [
            (u[pair.rater_a], u[pair.rater_b])
            for u in ratings.values()
            if pair.rater_a in u and pair.rater_b in u
        ]
        a, b = [x for x, _ in shared], [y for _, y in shared]
        assert pair.shared == len(shared)
        assert pair.confusion == tuple(
            tuple(sum(1 for x, y in shared if (x, y) == (i, j)) for j in range(4)) for i in range(4)
        )
        assert pair.exact.value == sum(x == y for x, y in shared) / len(shared)
        if pair.kappa.available:
            assert pair.kappa.value == pytest.approx(
                cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights="quadratic"), abs=1e-12
            )
    raters = {r for u in ratings.values() for r in u}
    sharing = {
        (ra, rb)
        for ra, rb in combinations(sorted(raters), 2)
        if any(ra in u and rb in u for u in ratings.values())
    }
    assert {(p.rater_a, p.rater_b) for p in pairwise(ratings)} == sharing
    group_of = {unit: unit % 3 for unit in ratings}
    by_group = alpha_by_group(ratings, group_of)
    assert [g for g, _ in by_group] == list(dict.fromkeys(group_of[u] for u in ratings))  # first-seen order
    for group, figure in by_group:
        assert figure == krippendorff_alpha_ordinal(
            {u: r for u, r in ratings.items() if group_of[u] == group}
        )


@settings(max_examples=100, deadline=None)
@given(ratings_tables)
def test_a_table_from_database_columns_gives_the_same_report_as_the_mapping(ratings: dict) -> None:
    rows = [(unit, rater, grade) for unit, by_rater in ratings.items() for rater, grade in by_rater.items()]
    units, raters, grades = (list(column) for column in zip(*rows, strict=True))
    table = agreement.Table.from_triples(units, raters, grades)
    group_of = {unit: unit % 2 for unit in ratings}
    assert agreement_report(table, group_of) == agreement_report(ratings, group_of)


def test_a_table_refuses_a_rater_grading_a_unit_twice_and_a_bad_grade_by_value() -> None:
    with pytest.raises(ValueError, match="same unit twice"):
        agreement.Table.from_triples([1, 1], ["ed", "ed"], [2, 3])
    with pytest.raises(ValueError, match="not 7"):
        agreement.Table.from_triples([1, 2], ["ed", "ed"], [2, 7])
    with pytest.raises(ValueError, match="not True"):
        agreement.Table.from_triples([1, 2], ["ed", "ed"], [2, True])
    empty = agreement_report(agreement.Table.from_triples([], [], []), {})
    assert (empty.units, empty.raters, empty.exact.reason, empty.alpha.reason) == (0, 0, NO_PAIRS, NO_PAIRS)
