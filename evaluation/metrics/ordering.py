"""Ranking a run and the tie policies, shared by every metric.

`ranked_indices` is the reference implementation of the tie policies, one query at a time;
`_order_by_score` orders whole runs at once and applies the same policies to every query whose top
K holds a tie in one pass (`_order_tied`; tests/evaluation/metrics/test_tie_order.py holds the
two to the same order). `Ranked` is a run ordered
once, what every metric's batch reads; `TiedGroups` applies ties="expected" to any metric's gains.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter, lt

import numpy as np

from evaluation.metrics import lookup
from evaluation.metrics.data import Pool, Run, _check_ranking, _check_score
from evaluation.metrics.policies import EvaluationError, Listed, Settings, Ties, gettext_noop

# Rankings longer than this many times the positions needed are partially sorted (argpartition);
# shorter ones are sorted outright, which numpy does faster at those sizes.
PARTIAL_SORT_RATIO = 32


def _tie_groups(ordered_scores: Sequence[float]) -> list[tuple[int, int]]:
    """[start, end) spans of equal scores in an ordered score list."""
    groups = []
    start = 0
    for i in range(1, len(ordered_scores) + 1):
        if i == len(ordered_scores) or ordered_scores[i] != ordered_scores[start]:
            groups.append((start, i))
            start = i
    return groups


def ranked_indices(
    doc_ids: Sequence[str],
    scores: Sequence[float],
    ties: Ties,
    *,
    k: int | None = None,
    query_id: str = "",
    lines: Sequence[int] | None = None,
    source: str | None = None,
) -> list[int]:
    """Input indices in ranked order: score high to low, ties under `ties`.

    ties="error" refuses a tie that reaches into the first `k` positions (any tie when k is
    None); ties below K cannot change NDCG@K. ties="expected" orders each tied group by ascending
    document ID for display; the averaging itself happens when gains are computed.
    """
    order = list(range(len(doc_ids)))
    if ties in ("docid-desc", "docid-asc", "expected"):
        order.sort(key=doc_ids.__getitem__, reverse=ties == "docid-desc")
    # Python's sort is stable, also with reverse=True, so the secondary order survives.
    order.sort(key=scores.__getitem__, reverse=True)
    if ties == "error":
        ordered = [scores[i] for i in order]
        for start, end in _tie_groups(ordered):
            if end - start > 1 and (k is None or start < k):
                members = sorted(order[start:end])  # input (file) order reads best in a message
                params: dict[str, object] = {
                    "query": query_id,
                    "docs": Listed((doc_ids[i] for i in members[:5]), more=len(members) > 5),
                    "score": ordered[start],
                    "first": start + 1,
                    "last": end,
                }
                if lines is not None:
                    template = gettext_noop(
                        "query %(query)r: documents %(docs)s share the score %(score)r at ranks "
                        "%(first)s-%(last)s (lines %(lines)s); "
                        "choose a tie policy: docid-desc (trec_eval), docid-asc, input-order or expected"
                    )
                    params["lines"] = Listed(lines[i] for i in members[:5])
                else:
                    template = gettext_noop(
                        "query %(query)r: documents %(docs)s share the score %(score)r at ranks "
                        "%(first)s-%(last)s; "
                        "choose a tie policy: docid-desc (trec_eval), docid-asc, input-order or expected"
                    )
                raise EvaluationError(
                    template,
                    params,
                    query=query_id,
                    doc_id=doc_ids[members[0]],
                    source=source,
                    line=lines[members[0]] if lines is not None else None,
                )
    return order


def order_scored(
    pairs: Iterable[tuple[str, float]], ties: Ties = "error", *, k: int | None = None, query_id: str = ""
) -> list[tuple[str, float]]:
    """Order (document ID, score) pairs under a tie policy; see `ranked_indices`."""
    items = list(pairs)
    docs = [doc for doc, _score in items]
    scores = [score for _doc, score in items]
    _check_ranking(query_id, docs, None, None)
    for doc, score in items:
        _check_score(score, query=query_id, doc_id=doc)
    return [items[i] for i in ranked_indices(docs, scores, ties, k=k, query_id=query_id)]


def _order_by_score(
    run: Run,
    kept: np.ndarray,
    is_extra: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    longest: int,
    width: int,
    settings: Settings,
) -> tuple[np.ndarray | None, np.ndarray]:
    """Global row indices of the first `width` ranked documents per query (-1 = none), and the
    rows whose top K holds a tie; None instead of the indices when every ranking is already in
    score order and no tie reaches into its top K (the usual file: then the input order is it).

    Rows whose top K holds a tie are re-ordered by `_order_tied` (ties="error" refuses the first
    of them with `ranked_indices`' message); elsewhere the score order is unique where it
    matters, so a row only needs its first `width` (+1, to see a tie at position K) documents in
    order (a partial sort when the rankings are long).
    """
    assert run._scores is not None
    k = settings.k
    n_rows = len(kept)
    scores = run._scores
    if is_extra.any():
        scores = scores[np.repeat(~is_extra, run._lengths)]
    # Scores as a (rows x longest) matrix; a padded cell (short ranking) is -inf, below any score.
    if n_rows and int(lengths.min()) == longest:
        matrix = scores.reshape(n_rows, longest)
    else:
        matrix = np.full((n_rows, longest), -np.inf)
        matrix[np.arange(longest) < lengths[:, None]] = scores
    head = min(longest, max(width, k) + 1)
    # A row needs sorting unless its first `head` scores fall and none after them is higher than
    # the last of those: then they are its top `head` in order (a tie among them is found below,
    # and one between the last and a later score lies past position K, which head exceeds).
    unsorted = np.zeros(0, np.intp)
    if longest > 1:
        rising = (matrix[:, 1:head] > matrix[:, : head - 1]).any(axis=1)
        if head < longest:
            rising |= matrix[:, head:].max(axis=1) > matrix[:, head - 1]
        unsorted = np.flatnonzero(rising)
    if len(unsorted):
        ranked = np.broadcast_to(np.arange(head), (n_rows, head)).copy()
        keys = np.negative(matrix[unsorted])  # ascending keys = descending scores
        if longest > PARTIAL_SORT_RATIO * head:  # only then does selection beat a full sort
            part = np.argpartition(keys, head - 1, axis=1)[:, :head]
            inner = np.argsort(np.take_along_axis(keys, part, axis=1), axis=1)
            ranked[unsorted] = np.take_along_axis(part, inner, axis=1)
        else:
            ranked[unsorted] = np.argsort(keys, axis=1)[:, :head]
        sorted_scores = np.take_along_axis(matrix, ranked, axis=1)
    else:
        ranked = None
        sorted_scores = matrix[:, :head]
    # A tie matters when it touches positions 1..K: equal scores at (j, j+1) with j < K.
    pairs = max(0, min(k, head - 1))
    equal = (sorted_scores[:, 1 : pairs + 1] == sorted_scores[:, :pairs]) & np.isfinite(
        sorted_scores[:, :pairs]
    )
    tied_rows = np.flatnonzero(equal.any(axis=1))
    if ranked is None and not len(tied_rows):
        return None, tied_rows
    if ranked is None:
        ranked = np.broadcast_to(np.arange(width), (n_rows, width))
    ranked = ranked[:, :width]
    top = np.where(ranked < lengths[:, None], starts[:, None] + ranked, -1)
    if len(tied_rows):
        if settings.ties == "error":
            _refuse_tie(run, kept, starts, lengths, tied_rows, settings)
        top[tied_rows] = _order_tied(
            run, matrix[tied_rows], starts[tied_rows], lengths[tied_rows], settings.ties, width
        )
    return top, tied_rows


def _refuse_tie(
    run: Run,
    kept: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    tied_rows: np.ndarray,
    settings: Settings,
) -> None:
    """Raise the ties="error" refusal of the first row whose top K holds a tie, in the words of
    `ranked_indices`, the reference implementation (which refuses any such row)."""
    assert run._scores is not None
    row = int(tied_rows[0])
    start = int(starts[row])
    end = start + int(lengths[row])
    ranked_indices(
        run._docs[start:end],
        run._scores[start:end].tolist(),
        settings.ties,
        k=settings.k,
        query_id=run.query_ids[int(kept[row])],
        lines=run._lines[start:end].tolist() if run._lines is not None else None,
        source=run.source,
    )
    raise AssertionError("a tie in the top K was not refused")  # pragma: no cover


def _order_tied(
    run: Run, scores: np.ndarray, starts: np.ndarray, lengths: np.ndarray, ties: Ties, width: int
) -> np.ndarray:
    """Global row indices of the first `width` documents of each of these rankings under `ties`
    (-1 = none): what `ranked_indices` gives, for all the rows at once.

    `scores` holds each ranking's scores (padded with -inf past its length). A stable sort by
    descending score keeps tied documents in input order (input-order); under the document-ID
    rules each tied group reaching into the first `width` positions is then ordered by ID, each
    member placed by how many members of its group have a smaller ID (groups are small: the
    pairs are few, where one sort of every tied ID by string would cost more than the rest).
    """
    n, longest = scores.shape
    # A ranking already in score order (the usual file) is its own stable order.
    order = np.broadcast_to(np.arange(longest), (n, longest)).copy()
    unsorted = np.flatnonzero((scores[:, 1:] > scores[:, :-1]).any(axis=1))
    ordered = scores
    if len(unsorted):
        order[unsorted] = np.argsort(np.negative(scores[unsorted]), axis=1, kind="stable")
        ordered = np.take_along_axis(scores, order, axis=1)
    if ties in ("docid-desc", "docid-asc", "expected") and longest > 1:
        # Only the first `width` positions are returned: past them, only a group that reaches
        # into them needs ordering, so the columns stop where the last such group ends.
        last = ordered[:, width - 1]
        reach = width
        while reach < longest and ((ordered[:, reach] == last) & np.isfinite(last)).any():
            reach += 1
        order, ordered, longest = order[:, :reach], ordered[:, :reach], reach
        opens = np.ones(ordered.shape, dtype=bool)  # a cell that starts a group of equal scores
        opens[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
        opens = opens.ravel()
        group = np.cumsum(opens) - 1
        first = np.flatnonzero(opens)  # flat cell where each group starts
        sizes = np.diff(first, append=opens.size)
        # Cells of tied groups that start within the first `width` positions; padding (-inf,
        # after every score) is never a document.
        valid = (np.arange(longest) < np.minimum(lengths, longest)[:, None]).ravel()
        cells = np.flatnonzero((sizes[group] > 1) & (first[group] % longest < width) & valid)
        if len(cells):
            flat = order.reshape(-1)
            rows = cells // longest
            docs = starts[rows] + flat[cells]
            mine = group[cells]
            size = sizes[mine]
            # Every (cell, member of its group) pair: the group's members are consecutive cells.
            at = np.repeat(np.arange(len(cells)), size)
            lead = np.arange(len(cells)) - (cells - first[mine])
            partner = np.repeat(lead, size) + (np.arange(len(at)) - np.repeat(np.cumsum(size) - size, size))
            smaller = _smaller_ids(run, docs[partner], docs[at])
            below = np.bincount(at, weights=smaller, minlength=len(cells)).astype(np.int64)
            if ties == "docid-desc":
                below = size - 1 - below
            placed = order.copy().reshape(-1)
            placed[first[mine] + below] = flat[cells]
            order = placed.reshape(n, longest)
    ranked = order[:, :width]
    return np.where(ranked < lengths[:, None], starts[:, None] + ranked, -1)


def _smaller_ids(run: Run, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Whether document ID `left[i]` sorts before `right[i]` as Python compares strings.

    Compared by their words where both fit: UTF-8 preserves code point order, so byte order is
    string order, and a word read big-endian compares as its bytes do (the zero bytes after a
    short ID sort before any byte of a longer one, as no ID holds NUL). Too long for the words,
    or without words: compared as strings.
    """
    words = run._id_words
    if words is None:
        return _smaller_strings(run, left, right)
    ours, theirs = words[left].byteswap(), words[right].byteswap()
    column = (ours != theirs).argmax(axis=1)[:, None]
    smaller = (
        np.take_along_axis(ours, column, axis=1)[:, 0] < np.take_along_axis(theirs, column, axis=1)[:, 0]
    )
    slow = np.flatnonzero((words[left, 0] == lookup.TOO_LONG) | (words[right, 0] == lookup.TOO_LONG))
    if len(slow):
        smaller[slow] = _smaller_strings(run, left[slow], right[slow])
    return smaller


def _smaller_strings(run: Run, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    pairs = map(lt, _gather(run._docs, left), _gather(run._docs, right))
    return np.fromiter(pairs, dtype=bool, count=len(left))


def _gather(items: Sequence[str], indices: np.ndarray) -> Sequence[str]:
    """items[i] for each index, in one C call (a per-item __getitem__ map costs ~10x more)."""
    if len(indices) == 1:
        return [items[int(indices[0])]]
    return itemgetter(*indices.tolist())(items) if len(indices) else []


@dataclass(frozen=True, eq=False)
class TiedGroups:
    """ties="expected": the tied groups of the rows whose top K holds a tie (`rows`, indexes into
    the order's matrix). `group` numbers every cell of those rows, flat, by the group it is in."""

    rows: np.ndarray
    group: np.ndarray
    sizes: np.ndarray
    reaches_top: np.ndarray  # cells whose group starts within the top K
    valid: np.ndarray  # cells holding a document

    def average(self, values: np.ndarray) -> None:
        """Replace each tied group's values by the group's mean, in place (any metric's gains:
        the expected value over the group's orders, as the metric is linear in them)."""
        sub = values[self.rows]
        # bincount adds the weights in element order: the same sum, term by term, as score_query.
        totals = np.bincount(self.group, weights=sub.ravel())
        values[self.rows] = (totals / self.sizes)[self.group].reshape(sub.shape)

    def widen(self, unjudged: np.ndarray, scored_unjudged: np.ndarray) -> np.ndarray:
        """The mask of unjudged IDs that enter the score: the top K (`scored_unjudged`) plus the
        members of tied groups that reach into it (their grades enter the mean even below K)."""
        widened = np.zeros(unjudged.shape, dtype=bool)
        widened[:, : scored_unjudged.shape[1]] = scored_unjudged
        widened[self.rows] |= unjudged[self.rows] & self.reaches_top & self.valid
        return widened


def tied_groups(run: Run, top: np.ndarray, tied_rows: np.ndarray, k: int) -> TiedGroups:
    """The tied groups of `tied_rows` in `top` (global row indices of the ranked documents, -1
    for none), by equal score."""
    assert run._scores is not None
    sub_top = top[tied_rows]
    valid = sub_top >= 0
    keys = np.where(valid, run._scores[np.where(valid, sub_top, 0)], -np.inf)
    starts_group = np.ones(keys.shape, dtype=bool)
    starts_group[:, 1:] = keys[:, 1:] != keys[:, :-1]
    group = np.cumsum(starts_group.ravel()) - 1
    first_column = np.flatnonzero(starts_group.ravel()) % keys.shape[1]
    reaches_top = (first_column < k)[group].reshape(keys.shape)
    return TiedGroups(tied_rows, group, np.bincount(group), reaches_top, valid)


# Grade codes in `Ranked.grades` besides the grades 0..3.
UNJUDGED = lookup.NOT_IN_POOL  # -1: an ID with no grade in the pool
EMPTY = -2  # no document at this position (a short list)


@dataclass(frozen=True, eq=False)
class Ranked:
    """A run ordered once for every metric (`batch.evaluate_run` builds it).

    `grades[r, j]` is the grade code of the document at position j + 1 of ranked row r (the run's
    queries that are in the pool, pool query `pool_rows[r]`): under ties="expected" the whole
    ranking, else the top K. `ties` holds the tied groups to average under "expected".
    The order may reach deeper than `settings.k` (several metrics at several K share it): a
    metric reads the first `settings.k` columns.
    """

    settings: Settings
    pool: Pool
    pool_rows: np.ndarray
    grades: np.ndarray
    ties: TiedGroups | None

    def at(self, k: int) -> Ranked:
        """The same order read by a metric at cutoff `k` (at most the order's depth, or every
        position under ties="expected"). The tied groups do not depend on K: each member's value
        is its group's mean wherever K falls."""
        if k == self.settings.k:
            return self
        return replace(self, settings=replace(self.settings, k=k))
