"""The ID rule: which query and document IDs every reader, import and pool file accepts. Pure."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evaluation.formats.values import as_json
from evaluation.metrics.policies import EvaluationError, gettext_noop, is_integer


def _id_text(value: object) -> object:
    """A JSON integer ID is its decimal text (evaluation/README.md: JSONL IDs may be JSON integers, as the
    app's imports take them); anything else is left for the checks to refuse."""
    return str(value) if is_integer(value) else value


def check_query_id(value: object, *, source: str, line: int) -> str:
    value = _id_text(value)
    if not isinstance(value, str) or not value or value != value.strip():
        if isinstance(value, str):
            # str.strip() also takes NEL, U+2028 and U+001C-U+001F: named as such, not as
            # "surrounding spaces" invisible in the message. The builders check the rest.
            check_id_chars(value, source=source, line=line)
        raise EvaluationError(
            gettext_noop(
                "query_id must be non-empty text or a whole number, without surrounding spaces, got %(value)s"
            ),
            {"value": as_json(value)},
            source=source,
            line=line,
        )
    return value


def check_doc_id(value: object, *, source: str, line: int, query: str) -> str:
    value = _id_text(value)
    if not isinstance(value, str) or not value or value != value.strip():
        if isinstance(value, str):
            check_id_chars(value, source=source, line=line, query=query)  # as above
        raise EvaluationError(
            gettext_noop(
                "query %(query)r: doc_id must be non-empty text or a whole number, without surrounding "
                "spaces, got %(value)s"
            ),
            {"query": query, "value": as_json(value)},
            query=query,
            source=source,
            line=line,
        )
    return value


# Control characters (tab and line breaks included; C1 too, with NEL), the Unicode line and
# paragraph separators and a byte-order mark cannot be part of an ID: a tab or a line break breaks
# the TAB-separated pool serialisation and the text table, and a BOM in mid-file (files joined with
# cat) makes a query 'q2' the pool cannot find, invisibly. The one rule for every ID the app reads,
# from files and from its own imports alike, so a frozen version's own exports import back.
# Invisible characters too (zero-width spaces and joiners, soft hyphen, bidi marks and overrides):
# 'd1' + U+200B looks exactly like 'd1' on every page and in every message, yet matches nothing.
# The characters that break the canonical pool text (lines, fields) were refused first; a pool
# version frozen before the invisible ones were may hold those, and its hash must stay verifiable.
_UNSERIALISABLE = "\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff"
_INVISIBLE = "\xad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069"
_BAD_ID_CHAR = re.compile(f"[{_UNSERIALISABLE}{_INVISIBLE}]")
_UNSERIALISABLE_ID_CHAR = re.compile(f"[{_UNSERIALISABLE}]")


def bad_id_chars(text: str) -> bool:
    """Whether `text` (an ID, or many joined) holds a character no ID may hold."""
    return _BAD_ID_CHAR.search(text) is not None


def unserialisable_id_chars(text: str) -> bool:
    """Whether `text` holds a character the canonical pool text cannot hold (a subset of the above)."""
    return _UNSERIALISABLE_ID_CHAR.search(text) is not None


def first_bad_id_char(text: str) -> str | None:
    """The first character of `text` no ID may hold, as U+XXXX, or None."""
    found = _BAD_ID_CHAR.search(text)
    return None if found is None else f"U+{ord(found.group()):04X}"


# The pools and the app's documents and queries store IDs of at most this many characters; a run
# naming a longer one could be neither pooled nor judged. (Longer is, in practice, a wrong column.)
MAX_ID_LENGTH = 255


def check_id_length(value: str, *, source: str, line: int, query: str | None = None) -> str:
    """`value` (a query ID when `query` is None, else a document ID of `query`), refused when it is
    longer than MAX_ID_LENGTH."""
    if len(value) <= MAX_ID_LENGTH:
        return value
    params = {"value": value[:40] + "…", "max": MAX_ID_LENGTH}  # its start finds it
    if query is None:
        raise EvaluationError(
            gettext_noop("query ID %(value)r is longer than %(max)s characters, which no pool can hold"),
            params,
            source=source,
            line=line,
        )
    raise EvaluationError(
        gettext_noop(
            "query %(query)r: document ID %(value)r is longer than %(max)s characters, which no pool can hold"
        ),
        {"query": query, **params},
        query=query,
        source=source,
        line=line,
    )


def check_id_chars(value: str, *, source: str, line: int, query: str | None = None) -> str:
    """`value` (a query ID when `query` is None, else a document ID of `query`), refused if it
    holds a control character or a byte-order mark, naming the character."""
    char = first_bad_id_char(value)
    if char is None:
        return value
    if query is None:
        raise EvaluationError(
            gettext_noop(
                "query ID %(value)r contains the character %(char)s; IDs cannot hold control characters, "
                "tabs, line breaks, invisible characters (zero-width spaces, direction marks) or a "
                "byte-order mark (U+FEFF, often left by joining files)"
            ),
            {"value": value, "char": char},
            source=source,
            line=line,
        )
    raise EvaluationError(
        gettext_noop(
            "query %(query)r: document ID %(value)r contains the character %(char)s; IDs cannot hold control "
            "characters, tabs, line breaks, invisible characters (zero-width spaces, direction marks) or a "
            "byte-order mark (U+FEFF, often left by joining files)"
        ),
        {"query": query, "value": value, "char": char},
        query=query,
        source=source,
        line=line,
    )


# A spreadsheet opening a CSV reads a cell starting with one of these as a formula ("=1+1",
# "=cmd|calc!A0", OWASP's "CSV injection"); a tab or CR in front is stripped by some first. Such IDs
# are valid, and the pool hash covers them as written, so exports keep them and say so; the
# spreadsheet-safe CSV prefixes them with "'", which spreadsheets read as "this cell is text".
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def reads_as_formula(value: str) -> bool:
    return value.startswith(FORMULA_STARTS)


def spreadsheet_safe(value: str) -> str:
    """`value` as a spreadsheet shows it as text: prefixed with "'" when it reads as a formula."""
    return "'" + value if reads_as_formula(value) else value


def formula_ids(ids: Iterable[str]) -> list[str]:
    """The distinct IDs among `ids` that a spreadsheet reads as formulas, sorted."""
    return sorted({value for value in ids if reads_as_formula(value)})
