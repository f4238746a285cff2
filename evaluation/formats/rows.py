"""The CSV and JSONL row readers every reader of those files uses: the engine's (csv.py, jsonl.py)
and the app's documents and queries (annotator/documents/readers.py). Pure.

Each says where a record starts and why a line cannot be read; the callers word the message.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from evaluation.formats.problems import Problems
from evaluation.formats.values import MAX_DIGITS, as_json, too_many_digits
from evaluation.metrics.policies import EvaluationError, gettext_noop

# One limit for every CSV this process reads (the csv module's is process-wide): runs, pools and
# the app's document imports alike, so a file one path accepts is not refused by another.
# Document bodies are long; the default (128 KiB) would reject them.
CSV_FIELD_LIMIT = 16 * 1024 * 1024
csv.field_size_limit(CSV_FIELD_LIMIT)

# A line that json cannot parse, for every reader of JSON lines (runs, pools, and the app's document
# and query imports): one sentence, so one translation. The msgid is the one the imports already use.
JSON_SYNTAX_PROBLEM = gettext_noop("not valid JSON (the problem is at column %(column)d).")

# What JSONLineError's kinds mean, worded for a reader's message (the line is added by it).
JSON_LINE_PROBLEMS = {
    "digits": gettext_noop("a number on this line has more than %(digits)s digits"),
    "depth": gettext_noop("the JSON on this line is nested too deeply"),
    "surrogate": gettext_noop(
        "a text on this line holds an unpaired surrogate escape (\\ud800 to \\udfff), which is not Unicode "
        "text"
    ),
    "nul": gettext_noop("a text on this line holds a NUL character (\\u0000)"),
}


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
    if too_many_digits(token):
        raise JSONLineError("digits")
    return int(token)


def _check_text(text: str) -> None:
    bad = _BAD_TEXT.search(text)
    if bad is not None:
        raise JSONLineError("nul" if bad.group() == "\x00" else "surrogate")


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


class CSVSyntaxError(ValueError):
    """A record the csv module cannot read. `kind`: "unclosed" (a quote never closed: the file ends
    inside the field), "too long" (a field over CSV_FIELD_LIMIT) or "malformed" (`detail` says how).
    `line` is where the record starts, `reached` the last line read."""

    def __init__(self, kind: str, detail: str, *, line: int, reached: int) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.line = line
        self.reached = reached


def csv_records(lines: Iterable[str]) -> Iterator[tuple[int, int, list[str]]]:
    """(first line, last line, fields) per CSV record, the header and blank lines included; a
    quoted field may span lines, so a record is named by the line it starts on."""
    # strict: a quote that is never closed is an error, not a field swallowing the rest of the file.
    reader = csv.reader(lines, strict=True)
    ended = 0
    try:
        for row in reader:
            start, ended = ended + 1, reader.line_num
            yield start, ended, row
    except csv.Error as error:
        detail = str(error)
        if detail == "unexpected end of data":
            kind = "unclosed"
        elif detail.startswith("field larger than field limit"):
            kind = "too long"
        else:
            kind = "malformed"
        raise CSVSyntaxError(kind, detail, line=ended + 1, reached=reader.line_num) from None


@dataclass(frozen=True)
class JSONProblem:
    """Why a line is not a JSON object. `kind`: "syntax" (json's `column`), one of JSONLineError's
    kinds (see JSON_LINE_PROBLEMS), "duplicate" (`key` given twice, its `values` in order) or
    "not object" (the line holds `value`, another JSON value)."""

    kind: str
    column: int = 0
    key: str = ""
    values: tuple[Any, Any] = (None, None)
    value: Any = None


def json_records(lines: Iterable[str]) -> Iterator[tuple[int, str, dict[str, Any] | JSONProblem]]:
    """(line number, the line's text, its object or the problem) per line that is not blank."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            # Without the line end, an error at the end is not "column 1" of the next line.
            value = load_json_line(line.rstrip("\r\n"))
        except json.JSONDecodeError as error:
            # The column, not json's English wording of the problem (error.msg), which no catalog
            # translates: a Chinese page would show "Expecting value".
            yield number, line, JSONProblem("syntax", column=error.colno)
            continue
        except JSONLineError as error:
            yield number, line, JSONProblem(error.kind)
            continue
        except DuplicateKeyError as error:
            yield number, line, JSONProblem("duplicate", key=error.key, values=error.values)
            continue
        if not isinstance(value, dict):
            yield number, line, JSONProblem("not object", value=value)
            continue
        yield number, line, value


def csv_table(
    lines: Iterator[str],
    name: str,
    required: tuple[str, ...],
    one_of: tuple[str, ...] = (),
    problems: Problems | None = None,
) -> tuple[dict[str, int], Iterator[tuple[int, list[str]]]]:
    """(column -> index, rows) of a CSV with a header holding `required` and one of `one_of`. A
    row of the wrong width goes to `problems` (by default: raised) and is skipped."""
    problems = problems if problems is not None else Problems()
    records = csv_records(lines)
    try:
        _start, header_end, header = next(records)
    except StopIteration:
        raise EvaluationError(
            gettext_noop("the file is empty; expected a header %(header)s"),
            {"header": ",".join(required)},
            source=name,
        ) from None
    except CSVSyntaxError as error:
        raise csv_problem(error, name, error.reached) from None
    # Names match in any case (Doc_ID), as the app's documents and queries imports match them.
    columns = {column.strip().lower(): i for i, column in enumerate(header)}
    if len(columns) != len(header):  # else the last copy wins silently: grade,grade reads the second
        twice = next(column for column, n in Counter(c.strip().lower() for c in header).items() if n > 1)
        raise EvaluationError(
            gettext_noop("the header %(header)r names the column %(column)r twice; keep one"),
            {"header": ",".join(header), "column": twice},
            source=name,
            line=header_end,
        )
    missing = [column for column in required if column not in columns]
    # "score|rank": one of them; written with symbols, so the sentence around it can be translated.
    alternatives = "|".join(one_of)
    if one_of and not any(column in columns for column in one_of):
        missing.append(alternatives)  # named together, so one correction fixes the header
    if missing:
        raise EvaluationError(
            gettext_noop("the header %(header)r lacks %(missing)s; expected columns %(required)s"),
            {
                "header": ",".join(header),  # as written in the file, not as a Python list
                "missing": ", ".join(missing),
                "required": ",".join([*required, alternatives] if one_of else required),
            },
            source=name,
            line=header_end,
        )

    def rows() -> Iterator[tuple[int, list[str]]]:
        try:
            # A record is named by the line it starts on, not the last line of a multi-line record.
            for start, _end, row in records:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != len(header):
                    problems.add(
                        EvaluationError(
                            gettext_noop(
                                "expected %(expected)s columns like the header, found %(found)s: %(row)r"
                            ),
                            {"expected": len(header), "found": len(row), "row": row},
                            source=name,
                            line=start,
                        )
                    )
                    continue
                yield start, row
        except CSVSyntaxError as error:
            raise csv_problem(error, name, error.line) from None

    return columns, rows()


def csv_problem(error: CSVSyntaxError, name: str, line: int) -> EvaluationError:
    if error.kind == "unclosed":
        return EvaluationError(
            gettext_noop(
                "a quote opened on this line is never closed (the file ends inside the quoted field)"
            ),
            source=name,
            line=line,
        )
    if error.kind == "too long":
        return EvaluationError(
            gettext_noop(
                "a field on this line is longer than %(limit)s characters, the most a field may hold"
            ),
            {"limit": f"{CSV_FIELD_LIMIT:,}"},
            source=name,
            line=line,
        )
    return EvaluationError(
        gettext_noop("malformed CSV: %(error)s"), {"error": error.detail}, source=name, line=line
    )


def json_objects(
    lines: Iterator[str], name: str, problems: Problems | None = None
) -> Iterator[tuple[int, dict[str, Any], str]]:
    """(line number, object, the line's text) per object line; the text serves error messages. A
    line that is not an object goes to `problems` (by default: raised) and is skipped."""
    problems = problems if problems is not None else Problems()
    for number, line, record in json_records(lines):
        if isinstance(record, JSONProblem):
            problems.add(json_problem(record, name, number))
            continue
        yield number, record, line


def json_problem(problem: JSONProblem, name: str, line: int) -> EvaluationError:
    if problem.kind == "syntax":
        return EvaluationError(JSON_SYNTAX_PROBLEM, {"column": problem.column}, source=name, line=line)
    if problem.kind == "duplicate":
        return EvaluationError(
            gettext_noop("the key %(key)r appears twice in this object"),
            {"key": problem.key},
            source=name,
            line=line,
        )
    if problem.kind == "not object":
        return EvaluationError(
            gettext_noop("expected a JSON object, found %(value)s"),
            {"value": as_json(problem.value)},
            source=name,
            line=line,
        )
    template = JSON_LINE_PROBLEMS[problem.kind]  # each marked where it is written
    return EvaluationError(template, {"digits": MAX_DIGITS}, source=name, line=line)
