"""Shared pieces of the readers: opening sources, grades and the grade map, row builders.

Readers are all-or-nothing: they raise `EvaluationError` (naming the file, the line, the value
and what is allowed) before returning anything. The builders here are the careful path that
every format uses to produce those errors; the TREC reader adds a lean fast path in front.
"""

from __future__ import annotations

import codecs
import io
import itertools
import json
import math
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import (
    MAX_GRADE,
    MIN_GRADE,
    EvaluationError,
    gettext_noop,
    is_integer,
)

Source = str | os.PathLike[str] | IO[str]

_INTEGER = re.compile(r"[+-]?[0-9]+")
_PLAIN_INTEGER = re.compile(r"-?[0-9]+")


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


def _too_many_digits(token: str) -> bool:
    return len(token.lstrip("+-")) > MAX_DIGITS


def whole(token: str) -> int:
    """int() of an _INTEGER token, or +-10**MAX_DIGITS for a longer one (see MAX_DIGITS)."""
    if not _too_many_digits(token):
        return int(token)
    return -(10**MAX_DIGITS) if token.startswith("-") else 10**MAX_DIGITS


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def text_lines(text: str) -> list[str]:
    """The lines of a text as files and editors count them. str.splitlines() also breaks at \\f,
    \\x1c-\\x1e, \\x85, U+2028 and U+2029, which JSON strings may hold: a valid line would be cut
    in two, and every later line number off by one."""
    return _LINE_BREAK.split(text)


class JSONLineError(ValueError):
    """A line json.loads crashes on, or reads into text no reader may take. `kind` says which:
    "digits" (an integer over MAX_DIGITS digits: json.loads raises a bare ValueError), "depth"
    (nested too deeply: RecursionError), "surrogate" (an unpaired \\ud800-\\udfff escape: not
    Unicode, so it cannot be stored or written as UTF-8), "nul" (a \\u0000 escape: PostgreSQL
    refuses NUL in text, and a raw NUL byte is refused everywhere already)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")


def _json_integer(token: str) -> int:
    if _too_many_digits(token):
        raise JSONLineError("digits")
    return int(token)


def _check_text(text: str) -> None:
    bad = _BAD_TEXT.search(text)
    if bad is not None:
        raise JSONLineError("nul" if bad.group() == "\x00" else "surrogate")


# A score as trec_eval and every other tool read it: ASCII digits, optional sign, point, exponent.
# (float() also takes "1_000", "١٢" and "１": other tools read those differently or not at all.)
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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


def source_name(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def replayable(source: Source) -> Source:
    """`source`, readable twice: a path that is not a regular file (a pipe, `/dev/stdin`, the
    shell's `<(zcat qrels.gz)`) gives its bytes once, so they are read into memory and served
    like an upload (the TREC readers' second pass read an empty pipe and said "no judgments
    found"). Bytes that are not UTF-8 are refused here, naming the line, as for a file."""
    if not isinstance(source, str | os.PathLike):
        return source
    try:
        if stat.S_ISREG(os.stat(source).st_mode):
            return source
        data = Path(source).read_bytes()
    except OSError:
        return source  # the reader reports it, with the reason
    name = os.fspath(source)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise _utf8_error_in(io.BytesIO(data), name) from None
    buffer = io.BytesIO(data)
    buffer.name = name  # the readers name the file in their errors
    return io.TextIOWrapper(buffer, encoding="utf-8-sig")


def usual_bytes(source: Source) -> bytes | None:
    """The whole of `source` as bytes when that is cheap, for the column pass of the TREC readers
    (evaluation/formats/columns.py): a file by its path, or an upload's text stream over its
    bytes (io.BytesIO: its bytes are shared, not copied) not yet read from; else None."""
    if isinstance(source, str | os.PathLike):
        try:
            return Path(source).read_bytes()
        except OSError:
            return None  # the line reader reports it, with the reason
    if (
        isinstance(source, io.TextIOWrapper)
        and codecs.lookup(source.encoding).name == "utf-8-sig"  # as files are read: a BOM is dropped
        and isinstance(source.buffer, io.BytesIO)
        and source.tell() == 0
    ):
        return source.buffer.getvalue()
    return None


def with_source[T](
    source: Source, read: Callable[[Callable[[], Iterator[str]], str], T], *, newline: str | None = None
) -> T:
    """Call `read(open_lines, name)`; `open_lines()` (re)opens the text, so a reader can take a
    second, careful pass after its fast pass failed. Text is UTF-8 (a BOM is accepted); a decoding
    error becomes an `EvaluationError` naming the line."""
    name = source_name(source)
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        handles: list[IO[str]] = []

        def open_lines() -> Iterator[str]:
            try:
                handle = open(path, encoding="utf-8-sig", newline=newline)  # noqa: SIM115 - closed below
            except OSError as error:
                raise EvaluationError(
                    gettext_noop("cannot read the file: %(reason)s"),
                    {"reason": error.strerror or error},
                    source=name,
                ) from None
            handles.append(handle)
            return handle

        try:
            return read(open_lines, name)
        except UnicodeDecodeError:
            raise _utf8_error(path, name) from None
        finally:
            for handle in handles:
                handle.close()
    stream = source
    if stream.seekable():
        start = stream.tell()

        def open_stream() -> Iterator[str]:
            stream.seek(start)
            return iter(stream)

        return read(open_stream, name)
    lines = list(stream)  # a pipe: keep the lines for the second pass
    return read(lambda: iter(lines), name)


# Every zip starts with a local file header; no UTF-8 text file can ("PK" + two control bytes).
ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"  # RFC 1952; 0x8b cannot start a UTF-8 character


def _utf8_error(path: Path, name: str) -> EvaluationError:
    # Text mode does not say where decoding failed: find the line in the raw bytes.
    with open(path, "rb") as raw:
        return _utf8_error_in(raw, name)


def _utf8_error_in(raw: IO[bytes], name: str) -> EvaluationError:
    """The error for the first byte of `raw` (at its start) that is not UTF-8, naming its line."""
    head = raw.read(len(ZIP_MAGIC))
    if head == ZIP_MAGIC:  # e.g. the app's export: say so, not "byte 0xfc"
        return EvaluationError(
            gettext_noop("the file is a zip archive: unzip it and give the text file inside it"),
            source=name,
            line=1,
        )
    if head.startswith(GZIP_MAGIC):
        return EvaluationError(
            gettext_noop("the file is gzip-compressed: decompress it (gunzip) and give the text file"),
            source=name,
            line=1,
        )
    raw.seek(0)
    for number, line in enumerate(raw, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            return EvaluationError(
                gettext_noop(
                    "the file is not valid UTF-8: byte %(byte)s at column %(column)s (save it as UTF-8)"
                ),
                {"byte": f"0x{line[error.start]:02x}", "column": error.start + 1},
                source=name,
                line=number,
            )
    return EvaluationError(gettext_noop("the file is not valid UTF-8"), source=name)


class DuplicateKeyError(ValueError):
    """An object naming `key` twice; `values` are what it gave it, in order (for the message)."""

    def __init__(self, key: str, values: tuple[Any, Any] = (None, None)) -> None:
        super().__init__(key)
        self.key = key
        self.values = values


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for key, value in pairs:
        if key in record:
            raise DuplicateKeyError(key, (record[key], value))
        record[key] = value
    return record


def _unique_checked_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    for key, value in pairs:
        _check_text(key)
        if isinstance(value, str):
            _check_text(value)
    return _unique_keys(pairs)


def load_json_line(text: str) -> Any:
    """json.loads, refusing an object that names a key twice (DuplicateKeyError): json.loads keeps
    the last value silently, so {"grade": 3, "grade": 1} would import as grade 1 without a word.
    What no reader may take raises JSONLineError (see there)."""
    # A lone surrogate or a NUL in a value comes from a \\u escape or is in the line as it is (json
    # refuses a raw NUL in a string, not a raw surrogate); one scan of the line decides whether
    # each string needs checking, which costs ~10% of the reading time of a large file.
    hook = _unique_checked_keys if "\\u" in text or _BAD_TEXT.search(text) else _unique_keys
    try:
        value = json.loads(text, object_pairs_hook=hook, parse_int=_json_integer)
    except RecursionError:
        raise JSONLineError("depth") from None
    if isinstance(value, str):
        _check_text(value)
    return value


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
        if any(_too_many_digits(piece.strip()) for piece in pieces):
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
        if not _INTEGER.fullmatch(token):
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
        if _too_many_digits(token):
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


class RunBuilder:
    """Collects run rows in input order; refuses duplicates and mixed scored/rank-only rows.

    With scores the input order is kept (the tie policy orders later). Rank-only rows are put in
    rank order, and the ranks of a query must be exactly 1..n.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.rows: dict[str, list[tuple[str, float | None, int | None, int]]] = {}
        self.seen: dict[str, dict[str, int]] = {}
        self.scored: bool | None = None
        self.first_system: tuple[str, int] | None = None  # (name, line) of the first `system` value

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
        scored = score is not None
        if self.scored is None:
            self.scored = scored
        elif scored != self.scored:
            template = (
                gettext_noop(
                    "query %(query)r, document %(doc)r: this row has no score but earlier rows do; "
                    "a run is either scored or rank-only"
                )
                if self.scored
                else gettext_noop(
                    "query %(query)r, document %(doc)r: this row has no rank but earlier rows do; "
                    "a run is either scored or rank-only"
                )
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
            seen = self.seen[query] = {}
        check_id_chars(doc, source=self.source, line=line, query=query)
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
        self.rows.setdefault(query, []).append((doc, score, rank, line))

    def run(self, name: str) -> Run:
        docs: list[str] = []
        scores: list[float] = []
        lines: list[int] = []
        lengths: list[int] = []
        warnings: list[EvaluationError] = []
        for query, rows in self.rows.items():
            # The first query where rank and score disagree is enough to say so.
            if (
                self.scored
                and not warnings
                and (disagreement := _rank_against_score(query, rows, self.source))
            ):
                warnings.append(disagreement)
            if not self.scored:
                rows = sorted(rows, key=lambda row: row[2])  # type: ignore[arg-type, return-value]
                for position, (doc, _score, rank, line) in enumerate(rows, start=1):
                    if rank != position:
                        params = {"query": query, "doc": doc, "rank": rank}
                        if position > 1 and rows[position - 2][2] == rank:
                            template = gettext_noop(
                                "query %(query)r, document %(doc)r: rank %(rank)s appears twice "
                                "(lines %(first)s and %(second)s)"
                            )
                            params |= {"first": rows[position - 2][3], "second": line}
                        else:
                            template = gettext_noop(
                                "query %(query)r, document %(doc)r: ranks must be 1..n without gaps, "
                                "but rank %(rank)s is at position %(position)s"
                            )
                            params["position"] = position
                        raise EvaluationError(
                            template,
                            params,
                            query=query,
                            doc_id=doc,
                            source=self.source,
                            line=line,
                        )
            for doc, score, _rank, line in rows:
                docs.append(doc)
                lines.append(line)
                if score is not None:
                    scores.append(score)
            lengths.append(len(rows))
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        run = Run._trusted(
            list(self.rows),
            docs,
            offsets,
            scores=np.array(scores, dtype=np.float64) if self.scored else None,
            lines=np.array(lines, dtype=np.int64),
            name=name,
            source=self.source,
        )
        run.warnings = tuple(warnings)
        return run


def parse_score(token: str, query: str, doc: str, *, source: str, line: int) -> float:
    value = plain_number(token)
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


def rank_if_valid(token: str) -> int | None:
    """A rank column's value where a score orders the run: only compared with the score, so one
    that is not a positive integer is not refused (trec_eval reads none of them)."""
    if not _INTEGER.fullmatch(token) or _too_many_digits(token) or int(token) < 1:
        return None
    return int(token)


def parse_rank(token: str, query: str, doc: str, *, source: str, line: int) -> int:
    if _INTEGER.fullmatch(token) and _too_many_digits(token):
        raise EvaluationError(
            gettext_noop("query %(query)r, document %(doc)r: rank has more than %(digits)s digits"),
            {"query": query, "doc": doc, "digits": MAX_DIGITS},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    if not _INTEGER.fullmatch(token) or int(token) < 1:
        raise EvaluationError(
            gettext_noop("query %(query)r, document %(doc)r: rank %(token)r is not a positive integer"),
            {"query": query, "doc": doc, "token": token},
            query=query,
            doc_id=doc,
            source=source,
            line=line,
        )
    return int(token)


def run_name(source: Source, name: str | None) -> str:
    if name is not None:
        return name
    # A file name that is not UTF-8 reaches Python with surrogate escapes, which no UTF-8 report
    # can hold (the JSON and CSV reports would carry a raw 0xff): such bytes become U+FFFD.
    file_name = Path(source_name(source)).name
    return file_name.encode("utf-8", "surrogateescape").decode("utf-8", "replace") or "run"


def open_target(target: Source, *, newline: str | None = None) -> tuple[IO[str], bool]:
    """A writable text stream for `target` and whether the caller must close it."""
    if isinstance(target, str | os.PathLike):
        return open(target, "w", encoding="utf-8", newline=newline), True  # noqa: SIM115
    if isinstance(target, io.TextIOBase) or hasattr(target, "write"):
        return target, False
    raise TypeError(f"cannot write to {target!r}")
