"""A file's problems gathered instead of raising the first: what a reader's `collect` asks for. Pure.

`Problems(None)` raises each problem as it is found (every reader's default); `Problems(n)` keeps
the n earliest lines' problems and counts the rest, and `check()` raises them as one
`EvaluationErrors`. Either way nothing partial is returned.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

from evaluation.metrics.policies import EvaluationError


class EvaluationErrors(EvaluationError):
    """Several problems of one file, in line order: `errors` and `more` (found but not kept).

    It stands for its first problem (template, params, file, line), so a caller that knows only
    `EvaluationError` still reports something true; its message lists them all."""

    def __init__(self, errors: Sequence[EvaluationError], more: int = 0) -> None:
        first = errors[0]
        listed = "; ".join(str(error) for error in errors)
        ValueError.__init__(self, listed + (f"; {more} more" if more else ""))
        # The first problem's parts as they are: built again, its quoted values would be cut twice.
        self.template, self.params, self.detail = first.template, first.params, first.detail
        self.query, self.doc_id, self.source, self.line = first.query, first.doc_id, first.source, first.line
        self.errors = tuple(errors)
        self.more = more

    def __reduce__(self) -> tuple[Any, ...]:
        return (EvaluationErrors, (self.errors, self.more))


class Problems:
    """Where a reader puts each problem it finds. `limit` None: raise it at once; else keep the
    problems of the `limit` earliest lines (a line's problems in the order found) and count the rest."""

    def __init__(self, limit: int | None = None) -> None:
        if limit is not None and limit < 1:
            raise ValueError(f"collect at least one problem, not {limit}")
        self.limit = limit
        self.found = 0
        # A max-heap on (line, order found): the latest is dropped first once `limit` are kept.
        self._kept: list[tuple[int, int, EvaluationError]] = []

    @property
    def collecting(self) -> bool:
        return self.limit is not None

    def add(self, error: EvaluationError) -> None:
        """Keep `error`, or raise it when not collecting."""
        if self.limit is None:
            raise error
        if isinstance(error, EvaluationErrors):
            for each in error.errors:
                self.add(each)
            self.found += error.more
            return
        self.found += 1
        item = (-(error.line or 0), -self.found, error)
        if len(self._kept) < self.limit:
            heapq.heappush(self._kept, item)
        else:
            heapq.heappushpop(self._kept, item)

    def check(self) -> None:
        """Raise what was found, if anything, as one EvaluationErrors."""
        if not self.found:
            return
        errors = [error for _line, _order, error in sorted(self._kept, reverse=True)]
        raise EvaluationErrors(errors, more=self.found - len(errors))

    def reading[T](self, read: Callable[[], T]) -> T:
        """`read()`, checked: a problem that ends the reading (a header, a quote never closed) joins
        those found before it."""
        try:
            result = read()
        except EvaluationError as error:
            if not self.collecting:
                raise
            self.add(error)
            self.check()  # raises: a problem was found
            raise
        self.check()
        return result
