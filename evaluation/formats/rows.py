"""The CSV and JSONL row readers every reader of those files uses: the engine's (tabular.py) and the
app's documents, queries and candidates (annotator/documents/readers.py). Pure.

Each says where a record starts and why a line cannot be read; the callers word the message (the
engine raises the first problem, the imports list every problem).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from evaluation.formats.common import DuplicateKeyError, JSONLineError, load_json_line
from evaluation.metrics.policies import gettext_noop

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
