"""How far editors agree on ordinal grades 0-3: pure functions (numpy and `krippendorff`), no Django.

Every figure is a `Figure`: a value and how many items it rests on or, where a value would
mislead, a reason code the page turns into a sentence. Raw grades in, counted with numpy, not
per-unit loops: a set's page passes a million grades. scikit-learn is the tests' oracle only.
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


def _grade_array(values: Sequence[object] | np.ndarray) -> np.ndarray:
    """`values` as int8 grades, each checked as `check_grade` checks it, without a call per value
    (a set's agreement page reads a million grades)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        array = values
    elif all(
        issubclass(t, int | np.integer) and not issubclass(t, bool | np.bool_) for t in set(map(type, values))
    ):
        try:
            array = np.fromiter(values, dtype=np.int64, count=len(values))
        except OverflowError:
            array = None
    else:
        array = None
    if array is not None and (not array.size or (array.min() >= 0 and array.max() <= 3)):
        return array.astype(np.int8)
    for value in values:
        check_grade(value)  # raises for the first bad value, naming it
    raise AssertionError("unreachable: some value failed the range check")


class Table:
    """Ratings as arrays, checked once: `grades[u, r]` is rater r's grade of unit u, or -1.

    Every figure below is computed from this. Build it from `{unit: {rater: grade}}`, or with
    `from_triples` from three aligned columns (what a database gives).
    """

    def __init__(self, units: Sequence[Any], raters: Sequence[Any], grades: np.ndarray) -> None:
        self.units = tuple(units)
        self.raters = tuple(raters)
        self.grades = grades
        present = grades >= 0
        unit_of, grade = np.nonzero(present)[0], grades[present].astype(np.int64)
        # counts[u, g]: how many raters gave unit u grade g.
        self.counts = np.bincount(unit_of * len(GRADES) + grade, minlength=len(units) * len(GRADES)).reshape(
            len(units), len(GRADES)
        )

    @classmethod
    def of(cls, ratings: Ratings | Table) -> Table:
        return ratings if isinstance(ratings, Table) else cls.from_ratings(ratings)

    @classmethod
    def from_ratings(cls, ratings: Ratings) -> Table:
        units = list(ratings)
        raters = sorted({r for by_rater in ratings.values() for r in by_rater}, key=_sort_key)
        column = {r: i for i, r in enumerate(raters)}
        unit_index, rater_index, values = [], [], []
        for u, by_rater in enumerate(ratings.values()):
            for rater, grade in by_rater.items():
                unit_index.append(u)
                rater_index.append(column[rater])
                values.append(grade)
        grades = np.full((len(units), len(raters)), -1, dtype=np.int8)
        grades[unit_index, rater_index] = _grade_array(values)
        return cls(units, raters, grades)

    @classmethod
    def from_triples(
        cls, units: Sequence[Any], raters: Sequence[Any], grades: Sequence[int] | np.ndarray
    ) -> Table:
        """One grade per (unit, rater) row; units keep their first-seen order, raters are sorted."""
        checked = _grade_array(grades)
        position: dict[Any, int] = {}
        rows = np.fromiter(
            (position.setdefault(u, len(position)) for u in units), dtype=np.int64, count=len(units)
        )
        rater_list = sorted(set(raters), key=_sort_key)
        column = {r: i for i, r in enumerate(rater_list)}
        columns = np.fromiter(map(column.__getitem__, raters), dtype=np.int64, count=len(raters))
        table = np.full((len(position), len(rater_list)), -1, dtype=np.int8)
        table[rows, columns] = checked
        if int((table >= 0).sum()) != len(checked):  # two rows wrote the same cell
            raise ValueError("A rater graded the same unit twice.")
        return cls(list(position), rater_list, table)


def _figures(comparisons: int, exact: int, near: int) -> tuple[Figure, Figure]:
    if comparisons == 0:
        return Figure(None, 0, NO_PAIRS), Figure(None, 0, NO_PAIRS)
    return Figure(exact / comparisons, comparisons), Figure(near / comparisons, comparisons)


def percent_agreement(ratings: Ratings | Table) -> tuple[Figure, Figure]:
    """(exact, within one grade) over every pair of raters who graded the same unit.

    A unit graded by m raters contributes m(m-1)/2 comparisons, so a unit with three editors
    weighs more than one with two, as in the pairwise percent agreement of the literature.
    Counted from each unit's grade counts c_g: C(c_g, 2) equal pairs per grade, c_g * c_(g+1)
    pairs one grade apart.
    """
    counts = Table.of(ratings).counts
    m = counts.sum(axis=1)
    exact = int((counts * (counts - 1) // 2).sum())
    near = exact + int((counts[:, :-1] * counts[:, 1:]).sum())
    return _figures(int((m * (m - 1) // 2).sum()), exact, near)


def confusion_matrix(a: Sequence[int], b: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """4x4 counts: row = rater A's grade, column = rater B's grade, for the same items in order."""
    if len(a) != len(b):
        raise ValueError(f"Both raters need the same items: got {len(a)} and {len(b)} grades.")
    return _confusion(_grade_array(a), _grade_array(b))


def _confusion(a: np.ndarray, b: np.ndarray) -> tuple[tuple[int, ...], ...]:
    size = len(GRADES)
    counts = np.bincount(a.astype(np.int64) * size + b, minlength=size * size).reshape(size, size)
    return tuple(tuple(int(c) for c in row) for row in counts)


def cohen_kappa_quadratic(a: Sequence[int], b: Sequence[int]) -> Figure:
    """Quadratic-weighted Cohen's kappa over labels 0..3 (same value as scikit-learn's).

    kappa = 1 - sum(w * observed) / sum(w * expected), w[i][j] = (i - j)^2 and expected the outer
    product of the two raters' grade counts over n. Not reported with fewer than two shared items,
    or when either rater gave one grade to everything: then chance agreement cannot be told apart
    from real agreement and the formula returns 0, 1 or 0/0, none of which means anything.
    """
    return _kappa(confusion_matrix(a, b))


def _kappa(confusion: tuple[tuple[int, ...], ...]) -> Figure:
    observed = np.array(confusion, dtype=float)
    n = int(observed.sum())
    if n < 2:
        return Figure(None, n, TOO_FEW_ITEMS)
    rows, columns = observed.sum(axis=1), observed.sum(axis=0)
    used_a, used_b = int((rows > 0).sum()), int((columns > 0).sum())
    if used_a < 2 or used_b < 2:
        same = np.array_equal(rows > 0, columns > 0)
        return Figure(None, n, NO_VARIATION if same else ONE_GRADE_EDITOR)
    labels = np.arange(len(GRADES))
    weights = (labels[:, None] - labels[None, :]) ** 2
    expected = np.outer(rows, columns) / n
    return Figure(float(1 - (weights * observed).sum() / (weights * expected).sum()), n)


def _alpha_of_counts(counts: np.ndarray) -> Figure:
    """Ordinal alpha from a (units x 4) grade-count matrix (see krippendorff_alpha_ordinal)."""
    m = counts.sum(axis=1)
    pairable = counts[m >= 2]
    n = int(pairable.sum())
    if not n:
        return Figure(None, 0, NO_PAIRS)
    if len(pairable) < 2:
        # With one unit the expected disagreement comes from that unit alone: differing grades give
        # exactly 0 whatever they are, which reads as "chance agreement" from no evidence.
        return Figure(None, n, ONE_PAIR)
    if int((pairable.sum(axis=0) > 0).sum()) < 2:
        # Expected disagreement is zero: alpha would be 0/0.
        return Figure(None, n, NO_VARIATION)
    value = krippendorff.alpha(
        value_counts=pairable, level_of_measurement="ordinal", value_domain=list(GRADES)
    )
    return Figure(float(value), n)


def krippendorff_alpha_ordinal(ratings: Ratings | Table) -> Figure:
    """Krippendorff's alpha, ordinal metric, over all raters with missing data.

    `n` is the number of pairable values (grades in units that have at least two). Computed by the
    `krippendorff` package from the units' grade counts with the value domain fixed to 0..3, so
    grades nobody used still sit between the ones used, as the ordinal metric requires.
    """
    return _alpha_of_counts(Table.of(ratings).counts)


def pairwise(ratings: Ratings | Table) -> tuple[PairAgreement, ...]:
    """Every pair of raters that share at least one unit, in rater order."""
    table = Table.of(ratings)
    result = []
    for i, j in combinations(range(len(table.raters)), 2):
        a, b = table.grades[:, i], table.grades[:, j]
        both = (a >= 0) & (b >= 0)
        shared = int(both.sum())
        if not shared:
            continue
        confusion = _confusion(a[both], b[both])
        observed = np.array(confusion)
        exact = int(np.trace(observed))
        near = exact + int(np.trace(observed, 1) + np.trace(observed, -1))
        exact_figure, near_figure = _figures(shared, exact, near)
        result.append(
            PairAgreement(
                rater_a=table.raters[i],
                rater_b=table.raters[j],
                shared=shared,
                exact=exact_figure,
                within_one=near_figure,
                kappa=_kappa(confusion),
                confusion=confusion,
            )
        )
    return tuple(result)


def alpha_by_group(
    ratings: Ratings | Table, group_of: Mapping[Any, Any] | Sequence[Any]
) -> tuple[tuple[Any, Figure], ...]:
    """Alpha per group of units (e.g. per query), to find the groups editors read differently.

    `group_of` maps each unit to its group, or lists the groups in the table's unit order. Groups
    come in the order their first unit does.
    """
    table = Table.of(ratings)
    groups = [group_of[u] for u in table.units] if isinstance(group_of, Mapping) else list(group_of)
    if not groups:
        return ()
    position: dict[Any, int] = {}
    index = np.fromiter(
        (position.setdefault(g, len(position)) for g in groups), dtype=np.int64, count=len(groups)
    )
    order = np.argsort(index, kind="stable")  # units grouped, in group order, each group in unit order
    blocks = np.split(order, np.flatnonzero(np.diff(index[order])) + 1)
    return tuple(
        (group, _alpha_of_counts(table.counts[block])) for group, block in zip(position, blocks, strict=True)
    )


def agreement_report(
    ratings: Ratings | Table, group_of: Mapping[Any, Any] | Sequence[Any] | None = None
) -> AgreementReport:
    """All the figures of the agreement page from `{unit: {rater: grade}}` or a Table."""
    table = Table.of(ratings)
    exact, near = percent_agreement(table)
    return AgreementReport(
        units=len(table.units),
        raters=len(table.raters),
        grades=int(table.counts.sum()),
        exact=exact,
        within_one=near,
        alpha=krippendorff_alpha_ordinal(table),
        pairs=pairwise(table),
        alpha_by_group=alpha_by_group(table, group_of) if group_of is not None else (),
    )


def _sort_key(value: Hashable) -> tuple[str, object]:
    # Raters are usually ints (user IDs); fall back to text so mixed keys still sort stably.
    return (type(value).__name__, value if isinstance(value, int | str) else repr(value))


def severity(grades: Iterable[int]) -> int:
    """How far apart a pair's grades are: max - min (0 when unanimous)."""
    values = [check_grade(g) for g in grades]
    return max(values) - min(values) if values else 0
