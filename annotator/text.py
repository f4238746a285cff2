"""Lists inside translated sentences: the separators belong to the language too (Chinese writes
1、2 and ends a clause with ；, where an ASCII comma or semicolon reads as a typo)."""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import pgettext


def enumeration(items: Iterable[object]) -> str:
    """Values in a row, e.g. the grades 1, 2 (zh: 1、2)."""
    return pgettext("separator of an enumeration of values", ", ").join(map(str, items))


def clauses(items: Iterable[str]) -> str:
    """Statements in a row, each with its own colon, e.g. "(q1, A): open dispute; (q1, B): …"."""
    return pgettext("separator of a list of clauses", "; ").join(items)
