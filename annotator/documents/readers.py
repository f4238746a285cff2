"""Reading documents and queries from uploaded files into validated records, without the database.

Each reader raises `ImportFileError` listing every problem (up to `MAX_ERRORS`), each naming the
line, the field and the value, so a person can fix the file in one pass. Run files are read by
the engine's reader (annotator/grading/pooling.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from annotator.web.text import enumeration
from annotator.web.uploads import UploadTextError, upload_text
from evaluation.formats.ids import MAX_ID_LENGTH, first_bad_id_char
from evaluation.formats.rows import (
    CSV_FIELD_LIMIT,
    JSON_LINE_PROBLEMS,
    JSON_SYNTAX_PROBLEM,
    CSVSyntaxError,
    JSONProblem,
    csv_records,
    json_records,
)
from evaluation.formats.sources import iter_text_lines
from evaluation.formats.trec import trec_writable
from evaluation.formats.values import (
    MAX_DIGITS,
    as_json,
    as_written,
    escape_unprintable,
)

MAX_ERRORS = 20
ID_MAX_LENGTH = MAX_ID_LENGTH  # Document/Query.external_id, as the run reader's limit
TITLE_MAX_LENGTH = 500
URL_MAX_LENGTH = 2000
# A query is a question, its information need a paragraph or two: longer text is a wrong column
# that would make the queries page, and every grading page of it, megabytes long.
QUERY_TEXT_MAX_LENGTH = 10_000
UNITS = ("document", "page", "chunk")

# The CSV field limit (long document bodies) is set once for the process by evaluation.formats.rows,
# imported above.


@dataclass(frozen=True)
class LineError:
    """One problem in an uploaded file. `line` is the 1-based physical line where the record starts."""

    line: int
    field: str
    value: str
    message: str
    source: str = ""  # the file name, when several files are read together

    def __str__(self) -> str:
        # Escaped: raw, a line break or U+2028 would split the one-line error the import commands print.
        value = escape_unprintable(self.value)
        value = value if len(value) <= 80 else value[:77] + "…"
        if self.field:
            text = _("Line %(line)d, field “%(field)s”, value “%(value)s”: %(message)s") % {
                "line": self.line,
                "field": self.field,
                "value": value,
                "message": self.message,
            }
        else:
            text = _("Line %(line)d: %(message)s") % {"line": self.line, "message": self.message}
        return f"{self.source}: {text}" if self.source else text


class ImportFileError(Exception):
    """The file cannot be imported; `errors` says exactly where and why. Nothing was stored."""

    def __init__(self, errors: list[LineError], more: int = 0) -> None:
        self.errors = errors
        self.more = more
        super().__init__("; ".join(str(e) for e in errors))

    def messages(self) -> list[str]:
        lines = [str(e) for e in self.errors]
        if self.more:
            lines.append(_("More problems not listed here: %(count)d.") % {"count": self.more})
        return lines


class _Collector:
    """Collects errors; stops keeping them after MAX_ERRORS but keeps counting."""

    def __init__(self) -> None:
        self.errors: list[LineError] = []
        self.more = 0

    def add(self, line: int, field_name: str, value: Any, message: str) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(LineError(line, field_name, "" if value is None else str(value), message))
        else:
            self.more += 1

    def raise_if_any(self) -> None:
        if self.errors:
            raise ImportFileError(self.errors, self.more)


OPTIONAL_DOCUMENT_FIELDS = frozenset({"title", "url", "unit"})


# Slots: an upload holds a record for every line, and an instance's own dict cost more than a
# short line of the file.
@dataclass(frozen=True, slots=True)
class DocumentRecord:
    line: int
    external_id: str
    body: str
    title: str = ""
    url: str = ""
    unit: str = "document"
    # The optional fields the file gives (its columns; in JSONL, the line's keys). One it leaves
    # out keeps the stored document's value: a body-only file must not wipe every title.
    given: frozenset[str] = OPTIONAL_DOCUMENT_FIELDS

    def kept(self) -> frozenset[str]:
        """The optional fields an existing document keeps as stored."""
        return OPTIONAL_DOCUMENT_FIELDS - self.given


@dataclass(frozen=True, slots=True)
class QueryRecord:
    line: int
    external_id: str
    text: str
    information_need: str = ""
    # False when the file has no information_need column (or key): the stored one is kept.
    gives_information_need: bool = True


def decode_upload(data: bytes | str) -> str:
    """The file's text, by the uploads' one rule (UTF-8, no NUL; a zip or gzip said to be one), or
    ImportFileError: every importer reads through it, and so does a check before the format is
    known (a zip named anything is refused as a zip)."""
    try:
        return upload_text(data)
    except UploadTextError as exc:
        raise ImportFileError([LineError(exc.line, "", "", exc.message)]) from exc


def _csv_rows(
    text: str, allowed: tuple[str, ...], required: tuple[str, ...], errors: _Collector
) -> Iterator[tuple[int, dict[str, str]]]:
    """(starting line, {column: value}) per data row of a CSV file with a header line."""
    records = csv_records(iter_text_lines(text, keepends=True))  # not a StringIO: 4 bytes a character
    try:
        _start, _end, header = next(records, (1, 1, None))
    except CSVSyntaxError as exc:
        errors.add(1, "", "", _("the header line cannot be read as CSV (%(error)s).") % {"error": exc.detail})
        return
    if header is None or not any(h.strip() for h in header):
        errors.add(
            1,
            "",
            "",
            _("the file is empty: the first line must name the columns (%(columns)s).")
            % {"columns": ", ".join(allowed)},
        )
        return
    # Column names match in any case ("Doc_ID"); messages quote them as the file writes them.
    written = [h.strip() for h in header]
    columns = [name.lower() for name in written]
    bad_header = False
    for name, shown in zip(columns, written, strict=True):
        if name not in allowed:
            errors.add(
                1,
                _("header"),
                shown,
                _("unknown column. Allowed columns: %(columns)s.") % {"columns": ", ".join(allowed)},
            )
            bad_header = True
    for name in required:
        if name not in columns:
            errors.add(
                1,
                _("header"),
                ", ".join(written),
                _("the required column “%(column)s” is missing.") % {"column": name},
            )
            bad_header = True
    seen: set[str] = set()
    for name, shown in zip(columns, written, strict=True):
        if name in seen:
            errors.add(1, _("header"), shown, _("this column appears twice."))
            bad_header = True
        seen.add(name)
    if bad_header:
        return
    any_row = False
    while True:
        try:
            line, _end, row = next(records)
        except StopIteration:
            if not any_row:
                # A header alone imports nothing: say so rather than report "created 0" as success.
                errors.add(1, "", "", _("the file has a header but no rows: there is nothing to import."))
            return
        except CSVSyntaxError as exc:
            if exc.kind == "unclosed":
                message = _(
                    "a quote opened on this line is never closed (the file ends inside the quoted field)."
                )
            elif exc.kind == "too long":
                message = _(
                    "a field on this line is longer than %(limit)s characters, the most a field may hold."
                ) % {"limit": number_format(CSV_FIELD_LIMIT, force_grouping=True)}
            else:
                message = _("this line cannot be read as CSV (%(error)s).") % {"error": exc.detail}
            errors.add(exc.line, "", "", message)
            return
        if not row or not any(cell.strip() for cell in row):
            continue  # blank lines are allowed, e.g. at the end of the file
        any_row = True
        if len(row) != len(columns):
            errors.add(
                line,
                "",
                "",
                _("this row has %(found)d fields but the header has %(expected)d.")
                % {"found": len(row), "expected": len(columns)},
            )
            continue
        yield line, dict(zip(columns, row, strict=True))


def _json_kind(value: object) -> str:
    """What a JSON value is, in the words of the person who wrote the file (not Python's bool/list/dict)."""
    if isinstance(value, bool):
        return _("true or false")
    if isinstance(value, list):
        return _("a list [...]")
    return _("an object {...}")


def _jsonl_rows(
    text: str, allowed: tuple[str, ...], required: tuple[str, ...], errors: _Collector
) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, {key: value as text}) per JSON object line; IDs may be JSON integers."""
    any_line = False
    for number, raw, obj in json_records(iter_text_lines(text)):
        any_line = True
        if isinstance(obj, JSONProblem):
            if obj.kind == "syntax":
                # The column, not json's English wording of the problem: the message is translated.
                errors.add(number, "", raw.strip(), _(JSON_SYNTAX_PROBLEM) % {"column": obj.column})
            elif obj.kind == "duplicate":
                given = ", ".join(as_json(value) for value in obj.values)
                errors.add(number, obj.key, given, _("this key appears twice in the object; keep one."))
            elif obj.kind == "not object":
                errors.add(
                    number, "", raw.strip(), _('each line must be one JSON object, like {"key": "value"}.')
                )
            else:
                problem = _(JSON_LINE_PROBLEMS[obj.kind]) % {"digits": MAX_DIGITS}
                errors.add(number, "", "", f"{problem}.")
            continue
        row: dict[str, str] = {}
        ok = True
        for key, value in obj.items():
            if key not in allowed:
                errors.add(
                    number,
                    key,
                    value,
                    _("unknown key. Allowed keys: %(keys)s.") % {"keys": ", ".join(allowed)},
                )
                ok = False
            elif value is None:
                row[key] = ""
            elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
                errors.add(
                    number,
                    key,
                    json.dumps(value, ensure_ascii=False),
                    _("must be text or a number, not %(kind)s.") % {"kind": _json_kind(value)},
                )
                ok = False
            elif key in ID_KEYS and isinstance(value, float):
                # 1.5 or 1e2 would be stored as "1.5" and "100.0": IDs are text or whole JSON numbers,
                # as the evaluation readers take them.
                written = as_json(as_written(raw, key, value))  # 1e2 as in the file, not 100.0
                errors.add(
                    number,
                    key,
                    written,
                    _("an ID must be text or a whole number, not %(value)s.") % {"value": written},
                )
                ok = False
            elif key in TEXT_KEYS and not isinstance(value, str):
                # A number would be stored as Python writes it back (1e2 as "100.0"), not as typed.
                errors.add(
                    number,
                    key,
                    as_json(as_written(raw, key, value)),
                    _("must be text in quotes, not a number."),
                )
                ok = False
            elif isinstance(value, str):
                row[key] = value
            else:
                row[key] = json.dumps(value)
        for key in required:
            if key not in obj:
                errors.add(number, key, "", _("the required key is missing."))
                ok = False
        if ok:
            yield number, row
    if not any_line:
        errors.add(1, "", "", _("the file is empty."))


def _rows(
    text: str, fmt: str, allowed: tuple[str, ...], required: tuple[str, ...], errors: _Collector
) -> Iterator[tuple[int, dict[str, str]]]:
    reader: Callable[..., Iterator[tuple[int, dict[str, str]]]] = _csv_rows if fmt == "csv" else _jsonl_rows
    return reader(text, allowed, required, errors)


def _check_id(line: int, name: str, value: str, errors: _Collector) -> bool:
    """External IDs are what scores and frozen pools are bound to: non-empty, no padding, no tabs/newlines."""
    if not value:
        errors.add(line, name, value, _("must not be empty."))
        return False
    # The readers' rule (evaluation.formats): an ID stored here ends up in pools and their exports.
    # Checked before the spaces: str.strip() also takes NEL and U+2028, which are named here.
    if char := first_bad_id_char(value):
        errors.add(
            line,
            name,
            value,
            _(
                "contains the character %(char)s; IDs cannot hold control characters, tabs, line breaks, "
                "invisible characters (zero-width spaces, direction marks) or a byte-order mark (U+FEFF, "
                "often left by joining files)."
            )
            % {"char": char},
        )
        return False
    if value != value.strip():
        errors.add(line, name, value, _("must not start or end with spaces."))
        return False
    if len(value) > ID_MAX_LENGTH:
        errors.add(line, name, value, _("is longer than %(max)d characters.") % {"max": ID_MAX_LENGTH})
        return False
    return True


def _check_unique(line: int, name: str, value: str, seen: dict[str, int], errors: _Collector) -> bool:
    if value in seen:
        errors.add(
            line,
            name,
            value,
            _("appears twice in the file (first on line %(line)d).") % {"line": seen[value]},
        )
        return False
    seen[value] = line
    return True


DOCUMENT_COLUMNS = ("doc_id", "title", "body", "url", "unit")
ID_KEYS = ("doc_id", "query_id")
# Keys of documents and queries whose value is text (IDs may be JSON integers).
TEXT_KEYS = ("title", "body", "url", "unit", "text", "information_need")
QUERY_COLUMNS = ("query_id", "text", "information_need")

_url_validator = URLValidator(schemes=["http", "https"])


def read_documents(data: bytes | str, fmt: str) -> list[DocumentRecord]:
    """Validated documents from a CSV or JSONL file; raises ImportFileError naming every bad line."""
    errors = _Collector()
    text = decode_upload(data)
    records: list[DocumentRecord] = []
    seen: dict[str, int] = {}
    givens: dict[frozenset[str], frozenset[str]] = {}  # one set for the rows giving the same fields
    for line, row in _rows(text, fmt, DOCUMENT_COLUMNS, ("doc_id", "body"), errors):
        doc_id = row.get("doc_id", "")
        ok = _check_id(line, "doc_id", doc_id, errors) and _check_unique(line, "doc_id", doc_id, seen, errors)
        body = row.get("body", "")
        if not body.strip():
            errors.add(
                line, "body", body, _("is empty: editors grade the body, so every document needs one.")
            )
            ok = False
        title = row.get("title", "").strip()
        if len(title) > TITLE_MAX_LENGTH:
            errors.add(
                line, "title", title, _("is longer than %(max)d characters.") % {"max": TITLE_MAX_LENGTH}
            )
            ok = False
        url = row.get("url", "").strip()
        if url:
            try:
                if len(url) > URL_MAX_LENGTH:
                    raise ValidationError("too long")
                _url_validator(url)
            except ValidationError:
                # Django's URL rule wants a host with a domain, localhost or an IP address (https://x/d1
                # fails): say what passes.
                errors.add(
                    line,
                    "url",
                    url,
                    _(
                        "is not an http(s) URL with a host name (a domain like "
                        "https://help.example.com/a/1, localhost or an IP address) "
                        "of at most %(max)d characters."
                    )
                    % {"max": URL_MAX_LENGTH},
                )
                ok = False
        unit = row.get("unit", "").strip().lower() or "document"
        if unit not in UNITS:
            errors.add(
                line,
                "unit",
                row.get("unit", ""),
                _("must be one of: %(units)s.") % {"units": enumeration(UNITS)},
            )
            ok = False
        if ok:
            records.append(
                DocumentRecord(
                    line=line,
                    external_id=doc_id,
                    body=body,
                    title=title,
                    url=url,
                    unit=unit,
                    given=givens.setdefault(given := OPTIONAL_DOCUMENT_FIELDS.intersection(row), given),
                )
            )
    errors.raise_if_any()
    return records


def read_queries(data: bytes | str, fmt: str) -> list[QueryRecord]:
    """Validated queries from a CSV or JSONL file; raises ImportFileError naming every bad line."""
    errors = _Collector()
    text = decode_upload(data)
    records: list[QueryRecord] = []
    seen: dict[str, int] = {}
    for line, row in _rows(text, fmt, QUERY_COLUMNS, ("query_id", "text"), errors):
        query_id = row.get("query_id", "")
        ok = _check_id(line, "query_id", query_id, errors) and _check_unique(
            line, "query_id", query_id, seen, errors
        )
        query_text = row.get("text", "").strip()
        if not query_text:
            errors.add(line, "text", row.get("text", ""), _("must not be empty."))
            ok = False
        for name, value in (
            ("text", query_text),
            ("information_need", row.get("information_need", "").strip()),
        ):
            if len(value) > QUERY_TEXT_MAX_LENGTH:
                errors.add(
                    line,
                    name,
                    value[:40] + "…",
                    _("is longer than %(max)d characters (it has %(length)d).")
                    % {"max": QUERY_TEXT_MAX_LENGTH, "length": len(value)},
                )
                ok = False
        if ok:
            records.append(
                QueryRecord(
                    line=line,
                    external_id=query_id,
                    text=query_text,
                    information_need=row.get("information_need", "").strip(),
                    gives_information_need="information_need" in row,
                )
            )
    errors.raise_if_any()
    return records


def unwritable_ids_warning(records: list[DocumentRecord] | list[QueryRecord]) -> str:
    """IDs a TREC line cannot hold (a space inside): valid here, but no TREC run or qrels file can
    name them, which an owner learns at import rather than at the first export."""
    spaced = [r for r in records if not trec_writable(r.external_id)]
    if not spaced:
        return ""
    return ngettext(
        "%(count)d ID holds a space (“%(id)s”, line %(line)d): TREC runs and qrels cannot name it; CSV and "
        "JSONL files can.",
        "%(count)d IDs hold a space (the first: “%(id)s”, line %(line)d): TREC runs and qrels cannot name "
        "them; CSV and JSONL files can.",
        len(spaced),
    ) % {"count": len(spaced), "id": spaced[0].external_id, "line": spaced[0].line}
