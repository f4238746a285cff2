"""The Pool and Run builders every reader ends in: rows in, duplicates and mixed rows refused. Pure.

Readers are all-or-nothing: they raise `EvaluationError` (naming the file, the line, the value and
what is allowed) before returning anything. The TREC reader adds a lean fast path in front.
"""

from __future__ import annotations

import itertools
import math
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from evaluation.formats.ids import check_id_chars, check_id_length
from evaluation.formats.problems import Problems
from evaluation.formats.sources import Source, source_name
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import EvaluationError, gettext_noop


class QrelsBuilder:
    """Collects (query, document, grade) rows; refuses a pair judged twice, naming both lines."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.grades: dict[str, dict[str, int]] = {}
        self.lines: dict[str, dict[str, int]] = {}

    def add(self, query: str, doc: str, grade: int, line: int) -> None:
        docs = self.grades.get(query)
        check_id_chars(doc, source=self.source, line=line, query=query)
        if docs is None:
            check_id_chars(query, source=self.source, line=line)
            docs = self.grades[query] = {}
            self.lines[query] = {}
        if doc in docs:
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r, document %(doc)r is judged twice (lines %(first)s and %(second)s)"
                ),
                {"query": query, "doc": doc, "first": self.lines[query][doc], "second": line},
                query=query,
                doc_id=doc,
                source=self.source,
                line=line,
            )
        docs[doc] = grade
        self.lines[query][doc] = line

    def pool(self) -> Pool:
        return Pool._trusted(self.grades, self.source)


@dataclass(frozen=True)
class RunRules:
    """What a run file may leave loose. Comparing needs every query's full order, so it takes none;
    pooling only takes each run's top documents, so it also reads the two kinds of file people
    pool from that a comparison refuses."""

    rank_gaps: bool = False  # ranks need only be unique per query (1, 3, 5), not exactly 1..n
    order_only: bool = False  # rows with neither score nor rank: the file order is the ranking
    name_by_system: bool = False  # named by the file's one tag or `system` value, else by `name`
    # IDs must fit the app's columns (ids.MAX_ID_LENGTH): a candidate is stored, while a comparison
    # reads a longer document ID as one that no pool judges.
    stored_ids: bool = False


# The readers' purposes (formats.read_run's `purpose`).
PURPOSES = {
    "compare": RunRules(),
    "pooling": RunRules(rank_gaps=True, order_only=True, name_by_system=True, stored_ids=True),
}
COMPARE = PURPOSES["compare"]

# The keys of a row with neither score nor rank, under `order_only`: any other may be a misspelt
# "rank" (rnak), whose file would otherwise be read in file order without a word.
ORDER_ONLY_COLUMNS = ("query_id", "doc_id", "system")


class _QueryRows:
    """One query's rows, held as columns until `RunBuilder.run`: as a tuple each, a row of a run
    file took several times the bytes of its line. A missing score is NaN here (parse_score
    refuses NaN in a file), and None again in `tuples()`."""

    __slots__ = ("docs", "lines", "ranks", "scores")

    def __init__(self) -> None:
        self.docs: list[str] = []
        self.scores = array("d")
        self.ranks: list[int | None] = []
        self.lines = array("q")

    def append(self, doc: str, score: float | None, rank: int | None, line: int) -> None:
        self.docs.append(doc)
        self.scores.append(math.nan if score is None else score)
        self.ranks.append(rank)
        self.lines.append(line)

    def tuples(self) -> list[tuple[str, float | None, int | None, int]]:
        return [
            (doc, None if math.isnan(score) else score, rank, line)
            for doc, score, rank, line in zip(self.docs, self.scores, self.ranks, self.lines, strict=True)
        ]


class RunBuilder:
    """Collects run rows in input order; refuses duplicates and rows ordered in different ways.

    With scores the input order is kept (the tie policy orders later). Rank-only rows are put in
    rank order, and the ranks of a query must be exactly 1..n (unique, under `rules.rank_gaps`).
    Rows with neither (under `rules.order_only`) keep the file order. The reader skips a row
    `add` refuses; `run` gives the rank problems to `problems` (by default: raises the first).
    """

    def __init__(self, source: str, rules: RunRules = COMPARE, problems: Problems | None = None) -> None:
        self.source = source
        self.rules = rules
        self.problems = problems if problems is not None else Problems()
        self.rows: dict[str, _QueryRows] = {}
        self.seen: dict[str, dict[str, int]] = {}
        self.kind: str | None = None  # "score", "rank" or "order": how the first row is ordered
        self.first_system: tuple[str, int] | None = None  # (name, line) of the first `system` value

    @property
    def scored(self) -> bool:
        return self.kind == "score"

    def system(self, value: object, line: int) -> None:
        """One file holds one run: a second, different `system` value is refused, not merged in."""
        name = str(value).strip() if value is not None else ""
        if not name:
            return
        if self.first_system is None:
            self.first_system = (name, line)
        elif name != self.first_system[0]:
            raise EvaluationError(
                gettext_noop(
                    "this row's system %(second)r differs from %(first)r on line %(first_line)s: "
                    "one file holds one run, so write each system to a file of its own"
                ),
                {"second": name, "first": self.first_system[0], "first_line": self.first_system[1]},
                source=self.source,
                line=line,
            )

    def add(self, query: str, doc: str, score: float | None, rank: int | None, line: int) -> None:
        kind = "score" if score is not None else "rank" if rank is not None else "order"
        if self.kind is None:
            self.kind = kind
        elif kind != self.kind:
            if self.kind == "score":
                template = gettext_noop(
                    "query %(query)r, document %(doc)r: this row has no score but earlier rows do; "
                    "a run is either scored or rank-only"
                )
            elif self.kind == "rank":
                template = gettext_noop(
                    "query %(query)r, document %(doc)r: this row has no rank but earlier rows do; "
                    "a run is either scored or rank-only"
                )
            else:
                template = gettext_noop(
                    "query %(query)r, document %(doc)r: earlier rows have neither score nor rank but this "
                    "one has; order every row of a run the same way"
                )
            raise EvaluationError(
                template,
                {"query": query, "doc": doc},
                query=query,
                doc_id=doc,
                source=self.source,
                line=line,
            )
        seen = self.seen.get(query)
        if seen is None:
            check_id_chars(query, source=self.source, line=line)
            if self.rules.stored_ids:
                check_id_length(query, source=self.source, line=line)
            seen = self.seen[query] = {}
        check_id_chars(doc, source=self.source, line=line, query=query)
        if self.rules.stored_ids:
            check_id_length(doc, source=self.source, line=line, query=query)
        if doc in seen:
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r: document %(doc)r appears twice in the run (lines %(first)s and "
                    "%(second)s)"
                ),
                {"query": query, "doc": doc, "first": seen[doc], "second": line},
                query=query,
                doc_id=doc,
                source=self.source,
                line=line,
            )
        seen[doc] = line
        rows = self.rows.get(query)
        if rows is None:
            rows = self.rows[query] = _QueryRows()
        rows.append(doc, score, rank, line)

    def run(self, name: str) -> Run:
        if self.rules.name_by_system and self.first_system is not None:
            name = self.first_system[0]
        docs: list[str] = []
        scores = array("d")
        lines = array("q")
        lengths: list[int] = []
        warnings: list[EvaluationError] = []
        # A row refused earlier leaves a gap of its own in its query's ranks: not said again.
        gaps = not self.rules.rank_gaps and not self.problems.found
        query_ids = list(self.rows)
        self.seen.clear()  # read: each query's rows are let go as they are copied
        for query in query_ids:
            rows = self.rows.pop(query).tuples()
            # The first query where rank and score disagree is enough to say so.
            if (
                self.scored
                and not warnings
                and (disagreement := _rank_against_score(query, rows, self.source))
            ):
                warnings.append(disagreement)
            if self.kind == "rank":
                rows = sorted(rows, key=lambda row: row[2])  # type: ignore[arg-type, return-value]
                self._check_ranks(query, rows, gaps=gaps)
            for doc, score, _rank, line in rows:
                docs.append(doc)
                lines.append(line)
                if score is not None:
                    scores.append(score)
            lengths.append(len(rows))
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        run = Run._trusted(
            query_ids,
            docs,
            offsets,
            scores=np.frombuffer(scores, dtype=np.float64).copy() if self.scored else None,
            lines=np.frombuffer(lines, dtype=np.int64).copy(),
            name=name,
            source=self.source,
        )
        run.warnings = tuple(warnings)
        return run

    def _check_ranks(
        self, query: str, rows: list[tuple[str, float | None, int | None, int]], *, gaps: bool
    ) -> None:
        """Refuses a rank given twice, and (`gaps`) ranks other than 1..n, up to the query's first
        problem: every position after it is off by as much."""
        for position, (doc, _score, rank, line) in enumerate(rows, start=1):
            params: dict[str, object] = {"query": query, "doc": doc, "rank": rank}
            if position > 1 and rows[position - 2][2] == rank:
                template = gettext_noop(
                    "query %(query)r, document %(doc)r: rank %(rank)s appears twice "
                    "(lines %(first)s and %(second)s)"
                )
                params |= {"first": rows[position - 2][3], "second": line}
                gaps = False
            elif rank != position and gaps:
                template = gettext_noop(
                    "query %(query)r, document %(doc)r: ranks must be 1..n without gaps, "
                    "but rank %(rank)s is at position %(position)s"
                )
                params["position"] = position
                gaps = False
            else:
                continue
            self.problems.add(
                EvaluationError(template, params, query=query, doc_id=doc, source=self.source, line=line)
            )


# A run with both a score and a rank is ordered by score and its rank is not read, as trec_eval
# does with a TREC run; said as a warning when the two order a query differently, since a file
# whose ranks are the intended order would otherwise be scored in another order without a word.
RANK_AGAINST_SCORE = gettext_noop(
    "query %(query)r: the rank and score columns order the documents differently (document %(doc)r has "
    "rank %(rank)s but a higher score than %(other)r at rank %(other_rank)s); the run is ordered by score "
    "and the rank is not read, as trec_eval does"
)


def _rank_against_score(
    query: str, rows: list[tuple[str, float | None, int | None, int]], source: str
) -> EvaluationError | None:
    """The warning for the first pair of rows whose ranks contradict their scores (a lower rank
    number with a lower score); None when the ranks agree, or some row has no usable rank."""
    if any(rank is None for _doc, _score, rank, _line in rows):
        return None
    by_rank = sorted(rows, key=lambda row: row[2])  # type: ignore[arg-type, return-value]
    for before, row in itertools.pairwise(by_rank):
        assert before[1] is not None and row[1] is not None  # a scored run
        if row[1] > before[1]:
            return EvaluationError(
                RANK_AGAINST_SCORE,
                {"query": query, "doc": row[0], "rank": row[2], "other": before[0], "other_rank": before[2]},
                query=query,
                doc_id=row[0],
                source=source,
                line=row[3],
            )
    return None


def run_name(source: Source, name: str | None) -> str:
    if name is not None:
        return name
    # A file name that is not UTF-8 reaches Python with surrogate escapes, which no UTF-8 report
    # can hold (the JSON and CSV reports would carry a raw 0xff): such bytes become U+FFFD.
    file_name = Path(source_name(source)).name
    return file_name.encode("utf-8", "surrogateescape").decode("utf-8", "replace") or "run"
