"""The two inputs of every computation: a frozen judgment `Pool` and a system's `Run`.

Validated once when built, immutable afterwards, and kept in flat query-grouped columns so the
batch engine works on whole arrays; the mapping-style accessors are for the web layer and tests.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from itertools import chain
from types import MappingProxyType
from typing import Any

import numpy as np

from evaluation.metrics.lookup import IdTable, IdWords, encode_ids
from evaluation.metrics.policies import EvaluationError, gettext_noop, grade_error


def _check_query_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise EvaluationError(
            gettext_noop("query ID must be a non-empty string, got %(value)r"), {"value": value}
        )
    return value


def _check_doc_id(value: object, query: str) -> str:
    if not isinstance(value, str) or not value:
        raise EvaluationError(
            gettext_noop("query %(query)r: document ID must be a non-empty string, got %(value)r"),
            {"query": query, "value": value},
            query=query,
        )
    return value


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class Pool(Mapping[str, Mapping[str, int]]):
    """A frozen judgment pool: query ID -> document ID -> grade (an int 0..3).

    It is the only source of IDCG: the ideal ranking of a query is its whole pool sorted by grade,
    never the candidates a system happened to return. Queries keep their insertion (file) order,
    which is the order of every per-query report.
    """

    def __init__(self, grades: Mapping[str, Mapping[str, int]], *, source: str | None = None) -> None:
        if not isinstance(grades, Mapping):
            raise EvaluationError(
                gettext_noop("a pool must be a mapping of query ID to {document ID: grade}, got %(type)s"),
                {"type": type(grades).__name__},
            )
        checked: dict[str, dict[str, int]] = {}
        for query, docs in grades.items():
            _check_query_id(query)
            if not isinstance(docs, Mapping):
                raise EvaluationError(
                    gettext_noop("query %(query)r: grades must be a mapping of document ID to grade"),
                    {"query": query},
                    query=query,
                )
            copy = dict(docs)
            values = list(copy.values())
            # Fast path: exact ints in range; otherwise find the offending entry for the message.
            if not (
                all(type(value) is int for value in values)
                and (not values or 0 <= min(values) <= max(values) <= 3)
            ) or not all(type(doc) is str and doc for doc in copy):
                for doc, grade in copy.items():
                    _check_doc_id(doc, query)
                    error = grade_error(grade, query=query, doc_id=doc)
                    if error is not None:
                        raise error
                copy = {doc: int(grade) for doc, grade in copy.items()}
            checked[query] = copy
        self._init(checked, source)

    @classmethod
    def _trusted(
        cls, grades: dict[str, dict[str, int]], source: str | None, *, id_words: IdWords | None = None
    ) -> Pool:
        """Build from already validated, privately owned dicts (the file readers); `id_words`:
        the document IDs' words in the dicts' order, when the reader made them from the file."""
        pool = cls.__new__(cls)
        pool._init(grades, source)
        pool._id_words = id_words
        return pool

    def _init(self, grades: dict[str, dict[str, int]], source: str | None) -> None:
        self._grades = grades
        self.source = source
        self._id_words: IdWords | None = None
        # Arrays derived from the frozen grades alone (e.g. IDCG per K and gain), computed on
        # first use by the batch engine and shared by every run scored against this pool.
        self._derived: dict[tuple[object, ...], np.ndarray] = {}

    # Mapping interface: read-only views, so nobody can edit a frozen pool through it.
    def __getitem__(self, query: str) -> Mapping[str, int]:
        return MappingProxyType(self._grades[query])

    def __iter__(self) -> Iterator[str]:
        return iter(self._grades)

    def __len__(self) -> int:
        return len(self._grades)

    def __contains__(self, query: object) -> bool:
        return query in self._grades

    def __repr__(self) -> str:
        return f"<Pool {self.source or ''} {len(self)} queries, {self.judgments} judgments>"

    @cached_property
    def query_ids(self) -> tuple[str, ...]:
        return tuple(self._grades)

    @cached_property
    def judgments(self) -> int:
        return sum(map(len, self._grades.values()))

    @cached_property
    def fingerprint(self) -> str:
        """SHA-256 of the sorted (query, document, grade) triples: equal pools, equal fingerprints."""
        digest = hashlib.sha256()
        for query in sorted(self._grades):
            docs = self._grades[query]
            for doc in sorted(docs):
                # repr() escapes tabs and newlines, so no two different pools share a text.
                digest.update(f"{query!r}\t{doc!r}\t{docs[doc]}\n".encode())
        return digest.hexdigest()

    @cached_property
    def _index(self) -> dict[str, int]:
        return {query: i for i, query in enumerate(self._grades)}

    @cached_property
    def _dicts(self) -> np.ndarray:
        """Object array of the per-query dicts, in query order, for vectorised gathers."""
        dicts = np.empty(len(self._grades), dtype=object)
        dicts[:] = list(self._grades.values())
        return _readonly(dicts)

    @cached_property
    def _lengths(self) -> np.ndarray:
        """Judgments per query, in query order."""
        return _readonly(
            np.fromiter(map(len, self._grades.values()), dtype=np.int64, count=len(self._grades))
        )

    @cached_property
    def _flat_grades(self) -> np.ndarray:
        """Every grade, query after query, each query's in its dict's order."""
        flat = np.fromiter(
            chain.from_iterable(map(dict.values, self._grades.values())),
            dtype=np.int64,
            count=int(self._lengths.sum()),
        )
        return _readonly(flat)

    @cached_property
    def _grade_counts(self) -> np.ndarray:
        """How many documents of each grade 0..3 every query has (queries x 4)."""
        lengths = self._lengths
        query_of = np.repeat(np.arange(len(lengths)) * 4, lengths)
        return _readonly(np.bincount(query_of + self._flat_grades, minlength=4 * len(lengths)).reshape(-1, 4))

    @cached_property
    def _id_table(self) -> IdTable | None:
        """The judgments as words in a hash table, for the batch engine's lookups (see
        evaluation/metrics/lookup.py); None when a document ID holds NUL (then it uses the dicts)."""
        words = self._id_words
        self._id_words = None  # the table holds them now
        if words is None:
            words = encode_ids(list(chain.from_iterable(self._grades.values())))
        if words is None:
            return None
        table = IdTable.build(words, self._lengths, self._flat_grades)
        for array in (table.base, table.shift, table.slots):
            _readonly(array)
        return table

    def ideal_grades(self, k: int) -> np.ndarray:
        """Each query's top-k grades, high to low, one row per query; 0 (gain 0) past the pool's end."""
        counts = self._grade_counts
        # Grades above each threshold: position j holds grade g while j < #(grades >= g).
        at_least = np.cumsum(counts[:, ::-1], axis=1)[:, ::-1]  # column g: number of grades >= g
        positions = np.arange(min(k, int(counts.sum(axis=1).max()) if len(counts) else 0))
        return (positions[None, :] < at_least[:, 1:, None]).sum(axis=1).astype(np.int64)


class Run:
    """One system's output: for each query, document IDs in input order, optionally with scores.

    Without scores the input order *is* the ranking. With scores the ranking is formed by score,
    high to low, under the tie policy of the evaluation; the rank column of a TREC file is ignored,
    as trec_eval ignores it. `lines` (file line of each row) lets errors point into the file.
    """

    def __init__(
        self,
        query_ids: Sequence[str],
        doc_ids: Sequence[str],
        offsets: Sequence[int] | np.ndarray,
        *,
        scores: Sequence[float] | np.ndarray | None = None,
        lines: Sequence[int] | np.ndarray | None = None,
        name: str = "run",
        source: str | None = None,
    ) -> None:
        """Columns grouped by query: query i owns rows offsets[i]:offsets[i + 1] of doc_ids
        (and of scores and lines, when given). Everything is validated; nothing is kept mutable."""
        docs = list(doc_ids)
        bounds = np.asarray(offsets, dtype=np.int64)
        n = len(docs)
        if (
            bounds.ndim != 1
            or len(bounds) != len(query_ids) + 1
            or (len(bounds) and (bounds[0] != 0 or bounds[-1] != n))
            or bool(np.any(np.diff(bounds) < 0))
        ):
            raise EvaluationError(
                gettext_noop(
                    "run %(name)r: offsets must rise from 0 to the number of rows, one more than the queries"
                ),
                {"name": name},
            )
        score_array = None if scores is None else np.array(scores, dtype=np.float64)
        line_array = None if lines is None else np.array(lines, dtype=np.int64)
        for what, column in (("scores", score_array), ("lines", line_array)):
            if column is not None and column.shape != (n,):
                template = (
                    gettext_noop("run %(name)r: %(count)s scores for %(rows)s rows")
                    if what == "scores"
                    else gettext_noop("run %(name)r: %(count)s lines for %(rows)s rows")
                )
                raise EvaluationError(template, {"name": name, "count": len(column), "rows": n})
        spans = bounds.tolist()
        for i, query in enumerate(query_ids):
            _check_query_id(query)
            start, end = spans[i], spans[i + 1]
            _check_ranking(
                query,
                docs[start:end],
                line_array[start:end].tolist() if line_array is not None else None,
                source,
            )
            if score_array is not None and not np.isfinite(score_array[start:end]).all():
                bad = start + int(np.flatnonzero(~np.isfinite(score_array[start:end]))[0])
                _check_score(
                    score_array[bad],
                    query=query,
                    doc_id=docs[bad],
                    source=source,
                    line=int(line_array[bad]) if line_array is not None else None,
                )
        self._init(query_ids, docs, bounds, score_array, line_array, name, source)

    @classmethod
    def _trusted(
        cls,
        query_ids: Sequence[str],
        doc_ids: list[str],
        offsets: np.ndarray,
        *,
        scores: np.ndarray | None = None,
        lines: np.ndarray | None = None,
        name: str = "run",
        source: str | None = None,
        id_words: IdWords | None = None,
    ) -> Run:
        """Build from columns the caller has already validated (the readers' fast path);
        `id_words`: the IDs' words, when the reader made them from the file."""
        run = cls.__new__(cls)
        run._init(query_ids, doc_ids, offsets, scores, lines, name, source, id_words)
        return run

    def _init(
        self,
        query_ids: Sequence[str],
        doc_ids: list[str],
        offsets: np.ndarray,
        scores: np.ndarray | None,
        lines: np.ndarray | None,
        name: str,
        source: str | None,
        id_words: IdWords | None = None,
    ) -> None:
        self.name = name
        self.source = source
        # What a reader noticed and accepted (EvaluationErrors never raised; each names the file,
        # line and values): a CSV/JSONL run whose ranks disagree with the scores that order it.
        self.warnings: tuple[EvaluationError, ...] = ()
        self.query_ids: tuple[str, ...] = tuple(query_ids)
        self._docs = doc_ids
        # The IDs' UTF-8 bytes as words, from the IDs alone, for the engine's lookups in a pool's
        # IdTable (evaluation/metrics/lookup.py); None when an ID holds NUL (then it uses dicts).
        words = encode_ids(doc_ids) if id_words is None else id_words
        self._id_words: IdWords | None = None if words is None else _readonly(words)
        self._offsets = _readonly(np.asarray(offsets, dtype=np.int64))
        self._scores = None if scores is None else _readonly(np.asarray(scores, dtype=np.float64))
        self._lines = None if lines is None else _readonly(np.asarray(lines, dtype=np.int64))
        self._index = {query: i for i, query in enumerate(self.query_ids)}
        if len(self._index) != len(self.query_ids):
            duplicate = next(q for i, q in enumerate(self.query_ids) if self._index[q] != i)
            raise EvaluationError(
                gettext_noop("run %(name)r lists query %(query)r in two separate groups"),
                {"name": name, "query": duplicate},
                query=duplicate,
            )

    @classmethod
    def from_rankings(cls, rankings: Mapping[str, Sequence[str]], *, name: str = "run") -> Run:
        """Ordered lists of document IDs per query: the list order is the ranking."""
        query_ids: list[str] = []
        docs: list[str] = []
        lengths: list[int] = []
        for query, ranking in rankings.items():
            _check_query_id(query)
            if isinstance(ranking, str | Mapping):
                raise EvaluationError(
                    gettext_noop("query %(query)r: a ranking must be a sequence of document IDs"),
                    {"query": query},
                    query=query,
                )
            items = list(ranking)
            _check_ranking(query, items, None, None)
            query_ids.append(query)
            docs.extend(items)
            lengths.append(len(items))
        return cls._trusted(query_ids, docs, _offsets(lengths), name=name)

    @classmethod
    def from_scores(
        cls,
        scored: Mapping[str, Mapping[str, float] | Sequence[tuple[str, float]]],
        *,
        name: str = "run",
    ) -> Run:
        """Scores per query, as {doc: score} (pytrec_eval's shape) or [(doc, score), ...] in input order."""
        query_ids: list[str] = []
        docs: list[str] = []
        scores: list[Any] = []
        lengths: list[int] = []
        unchecked = False  # rankings given as mappings: their IDs are checked at once, below
        done = 0  # rows so far
        for query, entries in scored.items():
            _check_query_id(query)
            if isinstance(entries, Mapping):  # its keys are distinct: only their type is left to check
                docs.extend(entries)
                scores.extend(entries.values())
                unchecked = True
            else:
                pairs = list(entries)
                items = [doc for doc, _score in pairs]
                _check_ranking(query, items, None, None)
                docs.extend(items)
                scores.extend(score for _doc, score in pairs)
            query_ids.append(query)
            lengths.append(len(docs) - done)
            done = len(docs)
        offsets = _offsets(lengths)
        if unchecked and not (set(map(type, docs)) <= {str} and all(docs)):
            spans = offsets.tolist()  # name the first query whose ranking holds a bad ID
            for i, query in enumerate(query_ids):
                _check_ranking(query, docs[spans[i] : spans[i + 1]], None, None)
        # Bulk check first (floats and ints only: bool is its own type here); the slow loop only
        # runs to name the offending entry.
        array = np.array(scores, dtype=np.float64) if set(map(type, scores)) <= _PLAIN_NUMBERS else None
        if array is None or not np.isfinite(array).all():
            spans = offsets.tolist()
            for i, query in enumerate(query_ids):
                for position in range(spans[i], spans[i + 1]):
                    _check_score(scores[position], query=query, doc_id=docs[position])
            array = np.array(scores, dtype=np.float64)
        return cls._trusted(query_ids, docs, offsets, scores=array, name=name)

    def __repr__(self) -> str:
        return f"<Run {self.name!r} {len(self.query_ids)} queries, {len(self._docs)} rows>"

    def __len__(self) -> int:
        return len(self.query_ids)

    def __contains__(self, query: object) -> bool:
        return query in self._index

    @property
    def has_scores(self) -> bool:
        return self._scores is not None

    @property
    def rows(self) -> int:
        return len(self._docs)

    def _span(self, query: str) -> tuple[int, int]:
        i = self._index[query]
        return int(self._offsets[i]), int(self._offsets[i + 1])

    def ranking(self, query: str) -> tuple[str, ...]:
        """Document IDs of `query` in input order (empty when the query is not in the run)."""
        if query not in self._index:
            return ()
        start, end = self._span(query)
        return tuple(self._docs[start:end])

    def scores_of(self, query: str) -> tuple[float, ...] | None:
        if self._scores is None:
            return None
        if query not in self._index:
            return ()
        start, end = self._span(query)
        return tuple(self._scores[start:end].tolist())

    def lines_of(self, query: str) -> tuple[int, ...] | None:
        if self._lines is None or query not in self._index:
            return None
        start, end = self._span(query)
        return tuple(self._lines[start:end].tolist())

    def as_dict(self) -> dict[str, list[tuple[str, float | None]]]:
        """{query: [(doc, score or None), ...]} in input order: what a file round trip preserves."""
        result: dict[str, list[tuple[str, float | None]]] = {}
        for query in self.query_ids:
            scores = self.scores_of(query)
            docs = self.ranking(query)
            result[query] = list(zip(docs, scores if scores is not None else [None] * len(docs), strict=True))
        return result

    @cached_property
    def _lengths(self) -> np.ndarray:
        return _readonly(np.diff(self._offsets))


# Number types accepted without a per-entry check (bool, a subclass of int, is deliberately absent).
_PLAIN_NUMBERS = {float, int, np.float64, np.float32, np.int64, np.int32}


def _offsets(lengths: Sequence[int]) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _check_score(
    score: Any, *, query: str, doc_id: str, source: str | None = None, line: int | None = None
) -> None:
    if isinstance(score, bool | np.bool_) or not isinstance(score, int | float | np.integer | np.floating):
        raise EvaluationError(
            gettext_noop("query %(query)r, document %(doc)r: score must be a number, got %(score)r"),
            {"query": query, "doc": doc_id, "score": score},
            query=query,
            doc_id=doc_id,
            source=source,
            line=line,
        )
    if not math.isfinite(float(score)):
        raise EvaluationError(
            gettext_noop("query %(query)r, document %(doc)r: score must be a finite number, got %(score)r"),
            {"query": query, "doc": doc_id, "score": score},
            query=query,
            doc_id=doc_id,
            source=source,
            line=line,
        )


def _check_ranking(
    query: str, docs: Sequence[object], lines: Sequence[int] | None, source: str | None
) -> None:
    """IDs are non-empty strings and appear once: one good document must not score twice."""
    if all(type(doc) is str and doc for doc in docs) and len(set(docs)) == len(docs):
        return
    seen: dict[str, int] = {}
    for position, doc in enumerate(docs):
        line = lines[position] if lines is not None else None
        if not isinstance(doc, str) or not doc:
            raise EvaluationError(
                gettext_noop("query %(query)r: document ID must be a non-empty string, got %(value)r"),
                {"query": query, "value": doc},
                query=query,
                source=source,
                line=line,
            )
        if doc in seen:
            first = seen[doc]
            if lines is not None:
                template = gettext_noop(
                    "query %(query)r: document %(doc)r appears twice in the ranking (lines %(first)s and "
                    "%(second)s)"
                )
                params = {"first": lines[first], "second": lines[position]}
            else:
                template = gettext_noop(
                    "query %(query)r: document %(doc)r appears twice in the ranking (positions %(first)s and "
                    "%(second)s)"
                )
                params = {"first": first + 1, "second": position + 1}
            raise EvaluationError(
                template,
                params | {"query": query, "doc": doc},
                query=query,
                doc_id=doc,
                source=source,
                line=line,
            )
        seen[doc] = position


__all__ = ["Pool", "Run"]
