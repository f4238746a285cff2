"""Numbers as the files write them: grades and the grade map, scores, ranks, and JSON values
quoted as written. One rule each, for every format and for the forms. Pure.
"""

from __future__ import annotations

import json
import math
import re

from evaluation.metrics.policies import MAX_GRADE, MIN_GRADE, EvaluationError, gettext_noop, is_integer

_PLAIN_INTEGER = re.compile(r"-?[0-9]+")

# The one rule for numbers in files, for every format and every path that reads them (pooling, run
# uploads, pool imports, `evaluate`; evaluation/README.md "Numbers"): the digits 0-9, never a "+",
# and integers without leading zeros, i.e. as JSON writes numbers. Other tools read "+2", "02", "٣"
# or "1_000" differently (trec_eval's atoi reads "٣" as 0, Python's int() as 3), and a pool file's
# grades must be spelled as the hash's canonical text spells them for its recipe to recompute it.
_GRADE = re.compile(r"-?(?:0|[1-9][0-9]*)")  # negative only for a grade map to map (-1:0)
_RANK = re.compile(r"[1-9][0-9]*")
_INTEGER = _GRADE  # a grade map's entries name grades


def is_plain_integer(text: str) -> bool:
    """A whole number written with the digits 0-9 (an optional minus, no plus, no spaces): the one
    rule for K, seeds and counts typed on the command line or in a web form. int() alone also
    takes " 3", "+3", "1_000" and full-width or Arabic-Indic digits."""
    return _PLAIN_INTEGER.fullmatch(text) is not None


def escape_unprintable(text: str) -> str:
    """`text` with every character that is not printable (a line break, U+2028, a control
    character) escaped, for messages and report cells that must stay on one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


# Python refuses int() of more than 4,300 digits (a guard against slow conversions) with a bare
# ValueError. No grade, rank or count is anywhere near this long: a longer one is refused as such
# (grades, ranks, JSON integers), or stands in as a number just as far out of range (whole()).
MAX_DIGITS = 100


def too_many_digits(token: str) -> bool:
    return len(token.lstrip("+-")) > MAX_DIGITS


def respelled(token: str) -> str | None:
    """The plain spelling of an integer written another way ("+2", "02", "٣", "1_000" -> "2", "2",
    "3", "1000"), for a message saying what to write instead; None when it is no integer at all."""
    if too_many_digits(token):
        return None
    try:
        return str(int(token))
    except ValueError:
        return None


def whole(token: str) -> int:
    """int() of an _INTEGER token, or +-10**MAX_DIGITS for a longer one (see MAX_DIGITS)."""
    if not too_many_digits(token):
        return int(token)
    return -(10**MAX_DIGITS) if token.startswith("-") else 10**MAX_DIGITS


# A score as trec_eval and every other tool read it: ASCII digits, optional sign, point, exponent.
# (float() also takes "1_000", "١٢" and "１": other tools read those differently or not at all.)
# No "+" in front (the one rule above); an exponent may carry one, as C and Python write them (1e+20).
_DECIMAL = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def plain_number(token: str) -> float | None:
    """The finite number a score token spells in plain decimal notation, else None."""
    if not _DECIMAL.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None  # 1e999 overflows to inf


def underflows(written: str, value: float) -> bool:
    """Whether a score written as nonzero reads as 0.0: 1e-400 is below the smallest double
    (~4.9e-324). It would tie with a 0 the file tells apart from it, and a tie message would
    quote a 0.0 the file does not hold; such scores are refused, as 1e400 is."""
    return value == 0.0 and any(c in "123456789" for c in written.lower().split("e")[0])


SCORE_UNDERFLOW = gettext_noop(
    "query %(query)r, document %(doc)r: score %(token)r is too close to 0 to be told apart from it "
    "(the smallest number a score can hold is about 4.9e-324)"
)


def parse_grade_map(text: str | None) -> dict[int, int]:
    """'-1:0,4:3' -> {-1: 0, 4: 3}: grades read from a file are mapped before validation.

    Targets must be grades 0..3; unmapped grades must already be 0..3. Typical use: trec_eval's
    qrels.rel_level has levels -1..4 (-1:0 for "judged non-relevant", 4:3 to cap the top level).
    """
    if text is None:
        return {}
    if not isinstance(text, str):
        raise EvaluationError(
            gettext_noop("a grade map is text like '-1:0,4:3', got %(type)s"), {"type": type(text).__name__}
        )
    if not text.strip():
        return {}
    mapping: dict[int, int] = {}
    for part in text.split(","):
        pieces = part.split(":")
        if len(pieces) != 2 or not all(_INTEGER.fullmatch(piece.strip()) for piece in pieces):
            raise EvaluationError(
                gettext_noop("grade map entry %(entry)r is not FROM:TO with integers (example: '-1:0,4:3')"),
                {"entry": part.strip()},
            )
        if any(too_many_digits(piece.strip()) for piece in pieces):
            # whole() would stand in 10**MAX_DIGITS: the recorded map would differ from the one typed.
            raise EvaluationError(
                gettext_noop("grade map entry %(entry)r has a number with more than %(digits)s digits"),
                {"entry": part.strip(), "digits": MAX_DIGITS},
            )
        source_grade, target = (whole(piece.strip()) for piece in pieces)
        if source_grade in mapping:
            raise EvaluationError(gettext_noop("grade map maps %(grade)s twice"), {"grade": source_grade})
        if not MIN_GRADE <= target <= MAX_GRADE:
            raise EvaluationError(
                gettext_noop("grade map target %(target)s (for %(grade)s) is outside %(low)s..%(high)s"),
                {"target": target, "grade": source_grade, "low": MIN_GRADE, "high": MAX_GRADE},
            )
        mapping[source_grade] = target
    return mapping


def format_grade_map(mapping: dict[int, int] | None) -> str | None:
    """{-1: 0, 4: 3} -> '-1:0,4:3' (parse_grade_map's syntax, sorted); None for no map."""
    if not mapping:
        return None
    return ",".join(f"{source}:{target}" for source, target in sorted(mapping.items()))


GRADE_SPELLING = gettext_noop(
    "query %(query)r, document %(doc)r: grade %(token)r is not written plainly; write %(plain)s "
    "(numbers are written with the digits 0-9, without '+' or leading zeros)"
)
RANK_SPELLING = gettext_noop(
    "query %(query)r, document %(doc)r: rank %(token)r is not written plainly; write %(plain)s "
    "(numbers are written with the digits 0-9, without '+' or leading zeros)"
)
SCORE_SPELLING = gettext_noop(
    "query %(query)r, document %(doc)r: score %(token)r starts with '+'; write %(plain)s "
    "(numbers are written without '+')"
)


class GradeReader:
    """Turns the grade field of a row into a grade 0..3, applying the grade map first."""

    def __init__(self, grade_map: dict[int, int] | None, source: str) -> None:
        self.map = dict(grade_map or {})
        self.source = source
        # Exact tokens the fast path may meet; anything else goes through from_token.
        self.tokens = {str(g): g for g in range(MIN_GRADE, MAX_GRADE + 1)}
        self.tokens.update({str(k): v for k, v in self.map.items()})

    def _range(self, value: int, query: str, doc: str, line: int, shown: str) -> int:
        if value in self.map:
            return self.map[value]
        if MIN_GRADE <= value <= MAX_GRADE:
            return value
        raise EvaluationError(
            gettext_noop(
                "query %(query)r, document %(doc)r: grade %(grade)s is outside %(low)s..%(high)s; "
                "map it with a grade map, e.g. '%(value)s:%(target)s'"
            ),
            {
                "query": query,
                "doc": doc,
                "grade": shown,
                "low": MIN_GRADE,
                "high": MAX_GRADE,
                "value": value,
                "target": MAX_GRADE if value > MAX_GRADE else MIN_GRADE,
            },
            query=query,
            doc_id=doc,
            source=self.source,
            line=line,
        )

    def from_token(self, token: str, query: str, doc: str, line: int) -> int:
        if not _GRADE.fullmatch(token) and (plain := respelled(token)) is not None:
            raise EvaluationError(
                GRADE_SPELLING,
                {"query": query, "doc": doc, "token": token, "plain": plain},
                query=query,
                doc_id=doc,
                source=self.source,
                line=line,
            )
        if not _GRADE.fullmatch(token):
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r, document %(doc)r: grade %(token)r is not an integer; "
                    "grades are integers %(low)s..%(high)s"
                ),
                {"query": query, "doc": doc, "token": token, "low": MIN_GRADE, "high": MAX_GRADE},
                query=query,
                doc_id=doc,
                source=self.source,
                line=line,
            )
        if too_many_digits(token):
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r, document %(doc)r: grade has more than %(digits)s digits; "
                    "grades are integers %(low)s..%(high)s"
                ),
                {"query": query, "doc": doc, "digits": MAX_DIGITS, "low": MIN_GRADE, "high": MAX_GRADE},
                query=query,
                doc_id=doc,
                source=self.source,
                line=line,
            )
        return self._range(int(token), query, doc, line, token)

    def from_value(self, value: object, query: str, doc: str, line: int) -> int:
        """A JSON value: only a JSON integer is a grade (not true, 2.0 or "2")."""
        if not is_integer(value):
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r, document %(doc)r: grade must be a JSON integer %(low)s..%(high)s, got "
                    "%(value)s"
                ),
                {"query": query, "doc": doc, "low": MIN_GRADE, "high": MAX_GRADE, "value": as_json(value)},
                query=query,
                doc_id=doc,
                source=self.source,
                line=line,
            )
        return self._range(int(value), query, doc, line, repr(value))  # type: ignore[call-overload]


class _Written(str):
    """A JSON number as the file wrote it (see `as_written`)."""


def as_written(line: str, key: str, value: object) -> object:
    """`value`, read from `key` of the JSON object on `line`, as the file wrote it when it is a
    number: 1e400 overflows to inf and 1e2 reads as 100.0, and an error message quoting those
    would not show what is in the file. For messages only: the line is parsed again, so a reader
    pays for it only when it refuses the value."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    try:
        record = json.loads(line, parse_float=_Written, parse_int=_Written)
    except (ValueError, RecursionError):
        return value
    written = record.get(key) if isinstance(record, dict) else None
    return written if isinstance(written, _Written) else value


def as_json(value: object, limit: int = 60) -> str:
    """A value read from JSON, shown as the file wrote it (true, null, "2"), not as Python would
    print it (True, None, '2'): the person reading the error wrote JSON. Long values are cut."""
    # json.dumps leaves NEL, U+2028 and other unprintables raw: a message must stay one line.
    written = str(value) if isinstance(value, _Written) else json.dumps(value, ensure_ascii=False)
    text = escape_unprintable(written)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_score(token: str, query: str, doc: str, *, source: str, line: int) -> float:
    value = plain_number(token)
    if value is None and token.startswith("+") and plain_number(token[1:]) is not None:
        raise EvaluationError(
            SCORE_SPELLING,
            {"query": query, "doc": doc, "token": token, "plain": token[1:]},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    if value is not None and underflows(token, value):
        raise EvaluationError(
            SCORE_UNDERFLOW,
            {"query": query, "doc": doc, "token": token},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    if value is None:
        raise EvaluationError(
            gettext_noop(
                "query %(query)r, document %(doc)r: score %(token)r is not a finite number "
                "written with the digits 0-9 (e.g. 12.5 or -3e-2)"
            ),
            {"query": query, "doc": doc, "token": token},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    return value


def rank_if_valid(token: str) -> int | None:
    """A rank column's value where a score orders the run: only compared with the score, so one
    that is not a positive integer is not refused (trec_eval reads none of them)."""
    if not _RANK.fullmatch(token) or too_many_digits(token):
        return None
    return int(token)


def parse_rank(token: str, query: str, doc: str, *, source: str, line: int) -> int:
    plain = None if _RANK.fullmatch(token) else respelled(token)
    if plain is not None and int(plain) >= 1:
        raise EvaluationError(
            RANK_SPELLING,
            {"query": query, "doc": doc, "token": token, "plain": plain},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    if _RANK.fullmatch(token) and too_many_digits(token):
        raise EvaluationError(
            gettext_noop("query %(query)r, document %(doc)r: rank has more than %(digits)s digits"),
            {"query": query, "doc": doc, "digits": MAX_DIGITS},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    if not _RANK.fullmatch(token):
        raise EvaluationError(
            gettext_noop("query %(query)r, document %(doc)r: rank %(token)r is not a positive integer"),
            {"query": query, "doc": doc, "token": token},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    return int(token)
