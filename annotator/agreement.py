"""How far editors agree on ordinal grades 0-3: pure functions (numpy and `krippendorff`), no Django.

Every figure comes back as a `Figure`: a value, how many items it rests on, and, when the value
would mislead, no value and a reason code instead. The page turns reason codes into sentences.

Inputs are *raw* grades, keyed by unit (a query-document pair) and then by rater (an editor):
`{unit: {rater: grade}}`. Units with a single grade are allowed (missing data); they simply add
nothing pairable.

Cohen's kappa is computed here with numpy rather than scikit-learn (a test-only dependency); the
tests check it against `sklearn.metrics.cohen_kappa_score(..., labels=[0, 1, 2, 3],
weights="quadratic")`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import krippendorff
import numpy as np

GRADES = (0, 1, 2, 3)

# Why a figure has no value. The page explains each one; a number would be misleading here.
NO_PAIRS = "no_pairs"  # no unit was graded by two or more raters
ONE_PAIR = "one_pair"  # alpha: one unit only, whose disagreement alone makes it 0 (or 0/0)
TOO_FEW_ITEMS = "too_few_items"  # kappa needs at least two shared items
NO_VARIATION = "no_variation"  # every grade involved is the same, so chance agreement is total
ONE_GRADE_EDITOR = "one_grade_editor"  # kappa: one of the two gave a single grade to every shared item

# Any hashable unit and rater keys (the app uses candidate and user IDs).
Ratings = Mapping[Any, Mapping[Any, int]]


@dataclass(frozen=True)
class Figure:
    """One statistic: `value` is None exactly when `reason` says why there is no honest number."""

    value: float | None
    n: int
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.value is not None


@dataclass(frozen=True)
class PairAgreement:
    """Two raters compared on the units both graded."""

    rater_a: Any
    rater_b: Any
    shared: int
    exact: Figure
    within_one: Figure
    kappa: Figure
    # confusion[i][j]: units rater_a graded i and rater_b graded j.
    confusion: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class AgreementReport:
    units: int
    raters: int
    grades: int
    exact: Figure
    within_one: Figure
    alpha: Figure
    pairs: tuple[PairAgreement, ...]
    alpha_by_group: tuple[tuple[Any, Figure], ...]


def check_grade(value: object) -> int:
    """A grade is an int 0..3; bool, float, str and anything out of range are refused."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) not in GRADES:
        raise ValueError(f"A grade is an integer from 0 to 3, not {value!r}.")
    return int(value)


def _checked(ratings: Ratings) -> dict[Hashable, dict[Hashable, int]]:
    return {
        unit: {rater: check_grade(g) for rater, g in by_rater.items()} for unit, by_rater in ratings.items()
    }


def percent_agreement(ratings: Ratings) -> tuple[Figure, Figure]:
    """(exact, within one grade) over every pair of raters who graded the same unit.

    A unit graded by m raters contributes m(m-1)/2 comparisons, so a unit with three editors
    weighs more than one with two, as in the pairwise percent agreement of the literature.
    """
    comparisons = exact = near = 0
    for by_rater in _checked(ratings).values():
        for a, b in combinations(by_rater.values(), 2):
            comparisons += 1
            exact += a == b
            near += abs(a - b) <= 1
    if comparisons == 0:
        return Figure(None, 0, NO_PAIRS), Figure(None, 0, NO_PAIRS)
    return Figure(exact / comparisons, comparisons), Figure(near / comparisons, comparisons)


def confusion_matrix(a: Sequence[int], b: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """4x4 counts: row = rater A's grade, column = rater B's grade, for the same items in order."""
    if len(a) != len(b):
        raise ValueError(f"Both raters need the same items: got {len(a)} and {len(b)} grades.")
    counts = np.zeros((len(GRADES), len(GRADES)), dtype=int)
    for x, y in zip(a, b, strict=True):
        counts[check_grade(x), check_grade(y)] += 1
    return tuple(tuple(int(c) for c in row) for row in counts)


def cohen_kappa_quadratic(a: Sequence[int], b: Sequence[int]) -> Figure:
    """Quadratic-weighted Cohen's kappa over labels 0..3 (same value as scikit-learn's).

    kappa = 1 - sum(w * observed) / sum(w * expected), w[i][j] = (i - j)^2 and expected the outer
    product of the two raters' grade counts over n. Not reported with fewer than two shared items,
    or when either rater gave one grade to everything: then chance agreement cannot be told apart
    from real agreement and the formula returns 0, 1 or 0/0, none of which means anything.
    """
    n = len(a)
    observed = np.array(confusion_matrix(a, b), dtype=float)
    if n < 2:
        return Figure(None, n, TOO_FEW_ITEMS)
    if len(set(a)) < 2 or len(set(b)) < 2:
        return Figure(None, n, NO_VARIATION if set(a) == set(b) else ONE_GRADE_EDITOR)
    labels = np.arange(len(GRADES))
    weights = (labels[:, None] - labels[None, :]) ** 2
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    return Figure(float(1 - (weights * observed).sum() / (weights * expected).sum()), n)


def krippendorff_alpha_ordinal(ratings: Ratings) -> Figure:
    """Krippendorff's alpha, ordinal metric, over all raters with missing data.

    `n` is the number of pairable values (grades in units that have at least two). Computed by the
    `krippendorff` package with the value domain fixed to 0..3, so grades nobody used still sit
    between the ones used, as the ordinal metric requires.
    """
    checked = _checked(ratings)
    pairable_units = [by_rater for by_rater in checked.values() if len(by_rater) >= 2]
    pairable = [g for by_rater in pairable_units for g in by_rater.values()]
    if not pairable:
        return Figure(None, 0, NO_PAIRS)
    if len(pairable_units) < 2:
        # With one unit the expected disagreement comes from that unit alone: differing grades give
        # exactly 0 whatever they are, which reads as "chance agreement" from no evidence (QA).
        return Figure(None, len(pairable), ONE_PAIR)
    if len(set(pairable)) < 2:
        # Expected disagreement is zero: alpha would be 0/0.
        return Figure(None, len(pairable), NO_VARIATION)
    raters = sorted({r for by_rater in checked.values() for r in by_rater}, key=_sort_key)
    units = list(checked)
    data = np.full((len(raters), len(units)), np.nan)
    row = {r: i for i, r in enumerate(raters)}
    for j, unit in enumerate(units):
        for rater, g in checked[unit].items():
            data[row[rater], j] = g
    value = krippendorff.alpha(
        reliability_data=data, level_of_measurement="ordinal", value_domain=list(GRADES)
    )
    return Figure(float(value), len(pairable))


def pairwise(ratings: Ratings) -> tuple[PairAgreement, ...]:
    """Every pair of raters that share at least one unit, in rater order."""
    checked = _checked(ratings)
    raters = sorted({r for by_rater in checked.values() for r in by_rater}, key=_sort_key)
    result = []
    for ra, rb in combinations(raters, 2):
        shared = [(u[ra], u[rb]) for u in checked.values() if ra in u and rb in u]
        if not shared:
            continue
        a = [x for x, _ in shared]
        b = [y for _, y in shared]
        exact, near = percent_agreement({i: {0: x, 1: y} for i, (x, y) in enumerate(shared)})
        result.append(
            PairAgreement(
                rater_a=ra,
                rater_b=rb,
                shared=len(shared),
                exact=exact,
                within_one=near,
                kappa=cohen_kappa_quadratic(a, b),
                confusion=confusion_matrix(a, b),
            )
        )
    return tuple(result)


def alpha_by_group(ratings: Ratings, group_of: Mapping[Any, Any]) -> tuple[tuple[Any, Figure], ...]:
    """Alpha per group of units (e.g. per query), to find the groups editors read differently."""
    groups: dict[Any, dict[Any, Mapping[Any, int]]] = {}
    for unit, by_rater in ratings.items():
        groups.setdefault(group_of[unit], {})[unit] = by_rater
    return tuple((group, krippendorff_alpha_ordinal(units)) for group, units in groups.items())


def agreement_report(ratings: Ratings, group_of: Mapping[Any, Any] | None = None) -> AgreementReport:
    """All the figures of the agreement page from one `{unit: {rater: grade}}` mapping."""
    exact, near = percent_agreement(ratings)
    return AgreementReport(
        units=len(ratings),
        raters=len({r for by_rater in ratings.values() for r in by_rater}),
        grades=sum(len(by_rater) for by_rater in ratings.values()),
        exact=exact,
        within_one=near,
        alpha=krippendorff_alpha_ordinal(ratings),
        pairs=pairwise(ratings),
        alpha_by_group=alpha_by_group(ratings, group_of) if group_of is not None else (),
    )


def _sort_key(value: Hashable) -> tuple[str, object]:
    # Raters are usually ints (user IDs); fall back to text so mixed keys still sort stably.
    return (type(value).__name__, value if isinstance(value, int | str) else repr(value))


def severity(grades: Iterable[int]) -> int:
    """How far apart a pair's grades are: max - min (0 when unanimous)."""
    values = [check_grade(g) for g in grades]
    return max(values) - min(values) if values else 0
