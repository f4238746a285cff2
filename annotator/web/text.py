"""Lists inside translated sentences, and sentences in a row: the separators belong to the
language too (Chinese writes 1、2, ends a clause with ；, where an ASCII comma or semicolon reads
as a typo, and leaves no space after 。)."""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.translation import get_language, pgettext

# Languages that put no space between sentences: their full stop is full-width (。).
UNSPACED_LANGUAGES = ("zh", "ja")


def enumeration(items: Iterable[object]) -> str:
    """Values in a row, e.g. the grades 1, 2 (zh: 1、2)."""
    return pgettext("separator of an enumeration of values", ", ").join(map(str, items))


def clauses(items: Iterable[str]) -> str:
    """Statements in a row, each with its own colon, e.g. "(q1, A): open dispute; (q1, B): …"."""
    return pgettext("separator of a list of clauses", "; ").join(items)


def sentence_space() -> str:
    """What goes between two sentences in the active language: a space, or nothing in Chinese,
    where "。 " reads as a stray gap."""
    return "" if (get_language() or "").lower().startswith(UNSPACED_LANGUAGES) else " "


def sentences(items: Iterable[object]) -> str:
    """Whole sentences in a row, each with its own full stop."""
    return sentence_space().join(str(item) for item in items if str(item))
