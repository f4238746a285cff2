"""Reading documents and queries files (annotator/documents/readers.py): pure Python, no database.

Every error must name the line, the field and the value, and a file with any error yields no
records at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest
from django.utils import translation

from annotator.documents.readers import MAX_ERRORS, ImportFileError, read_documents, read_queries
from evaluation.formats.registry import detect_format


@pytest.fixture(autouse=True)
def in_english() -> Iterator[None]:
    with translation.override("en"):
        yield


def problems(call: Callable[[], object]) -> list[str]:
    with pytest.raises(ImportFileError) as info:
        call()
    return info.value.messages()


def test_documents_csv_with_quoted_multiline_bodies_are_read_with_every_field() -> None:
    data = (
        'doc_id,title,body,url,unit\nA,Change phone,"Line one\nline two, with comma",https://example.com/a,page\n'
        "B,,Body B,,\n"
    )
    a, b = read_documents(data.encode(), "csv")
    assert (a.external_id, a.title, a.body, a.url, a.unit, a.line) == (
        "A",
        "Change phone",
        "Line one\nline two, with comma",
        "https://example.com/a",
        "page",
        2,
    )
    # B starts on physical line 4: A's body spans lines 2-3.
    assert (b.external_id, b.unit, b.line) == ("B", "document", 4)


def test_documents_jsonl_accepts_integer_ids_and_a_bom() -> None:
    lines = [
        json.dumps({"doc_id": 17, "body": "正文", "title": "标题"}, ensure_ascii=False),
        "",
        json.dumps({"doc_id": "x", "body": "b"}),
    ]
    records = read_documents(("\ufeff" + "\n".join(lines)).encode(), "jsonl")
    assert [(r.external_id, r.body, r.line) for r in records] == [("17", "正文", 1), ("x", "b", 3)]


def test_a_missing_body_names_its_line_field_and_value() -> None:
    messages = problems(lambda: read_documents(b"doc_id,body\nA,text\nB,   \n", "csv"))
    assert messages == [
        "Line 3, field “body”, value “   ”: is empty: editors grade the body, so every document needs one."
    ]


def test_a_duplicate_id_names_both_lines() -> None:
    messages = problems(lambda: read_documents(b"doc_id,body\nA,one\nB,two\nA,three\n", "csv"))
    assert len(messages) == 1
    assert "Line 4" in messages[0] and "“A”" in messages[0] and "first on line 2" in messages[0]


@pytest.mark.parametrize(
    ("header_and_row", "expected"),
    [
        (b"doc_id,boddy\nA,x\n", "field “header”, value “boddy”: unknown column"),
        (b"doc_id,title\nA,x\n", "the required column “body” is missing"),
        (b"doc_id,body,body\nA,x,y\n", "this column appears twice"),
        (b"doc_id,body\nA,x,extra\n", "Line 2: this row has 3 fields but the header has 2"),
        (b"doc_id,body\n A,x\n", "Line 2, field “doc_id”, value “ A”: must not start or end with spaces"),
        # Quoted as the file writes them, not lowercased: a header line that is data.
        (b"X1,body,t\nX2,body2,t\n", "field “header”, value “X1”: unknown column"),
        (b"X1,body,t\nX2,body2,t\n", "value “X1, body, t”: the required column “doc_id” is missing"),
        (b"Doc_ID,Body,Body\nA,x,y\n", "field “header”, value “Body”: this column appears twice"),
        (
            b"doc_id,body,url\nA,x,javascript:alert(1)\n",
            "field “url”, value “javascript:alert(1)”: is not an http(s) URL",
        ),
        # A host without a domain is accepted, not refused as if the scheme were wrong.
        (
            b"doc_id,body,url\nA,x,https://x/d1\n",
            "value “https://x/d1”: is not an http(s) URL with a host name (a domain like "
            "https://help.example.com/a/1, localhost or an IP address)",
        ),
        (
            b"doc_id,body,unit\nA,x,paragraph\n",
            "field “unit”, value “paragraph”: must be one of: document, page, chunk",
        ),
        (b"", "Line 1: the file is empty"),
        (b"doc_id,body\n\n", "Line 1: the file has a header but no rows"),
        # Unclosed, the quote would swallow the following rows into this body and report success.
        (
            b'doc_id,body\nA1,"unterminated\nB1,b2\nC1,c3\n',
            "Line 2: a quote opened on this line is never closed",
        ),
        (b'doc_id,body\nA1,"quoted"junk\n', "Line 2: this line cannot be read as CSV"),
        # PostgreSQL cannot store NUL in text: refused on every database alike, naming where it is.
        (b"doc_id,body\nn1,a\x00b\n", "Line 2: the file contains a NUL character (character 5 of the line)"),
    ],
)
def test_csv_problems_are_named_precisely(header_and_row: bytes, expected: str) -> None:
    messages = problems(lambda: read_documents(header_and_row, "csv"))
    assert any(expected in m for m in messages), messages


def test_a_field_over_the_csv_limit_is_refused_in_the_readers_language_with_the_limit() -> None:
    """Not the csv module's English "field larger than field limit (16777216)" on a zh-Hans page."""
    from django.utils import translation

    data = b"doc_id,body\nH1," + b"y" * (16 * 1024 * 1024 + 1) + b"\n"
    with translation.override("en"):
        assert problems(lambda: read_documents(data, "csv")) == [
            "Line 2: a field on this line is longer than 16,777,216 characters, the most a field may hold."
        ]
    with translation.override("zh-hans"):
        (message,) = problems(lambda: read_documents(data, "csv"))
    assert "16777216" in message.replace(",", "") and "field limit" not in message and "第 2 行" in message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"doc_id": "A", "body": "x"', "Line 1: not valid JSON (the problem is at column 28)"),
        ('["A", "x"]', "each line must be one JSON object"),
        ('{"doc_id": "A", "body": "x", "colour": "red"}', "field “colour”, value “red”: unknown key"),
        (
            '{"doc_id": true, "body": "x"}',
            "field “doc_id”, value “true”: must be text or a number, not true or false.",
        ),
        ('{"doc_id": ["A"], "body": "x"}', 'value “["A"]”: must be text or a number, not a list [...].'),
        ('{"doc_id": {"id": "A"}, "body": "x"}', "must be text or a number, not an object {...}."),
        ('{"body": "x"}', "field “doc_id”, value “”: the required key is missing"),
        (
            '{"doc_id": "A", "body": "x", "doc_id": "B"}',
            'Line 1, field “doc_id”, value “"A", "B"”: this key appears twice',
        ),
        # A number would be stored as Python writes it back (1e2 as "100.0"), not as typed.
        ('{"doc_id": "A", "body": 1e2}', "field “body”, value “1e2”: must be text in quotes, not a number."),
        ('{"doc_id": "A", "body": "x", "title": 7}', "field “title”, value “7”: must be text in quotes"),
    ],
)
def test_jsonl_problems_are_named_precisely(line: str, expected: str) -> None:
    messages = problems(lambda: read_documents(line.encode(), "jsonl"))
    assert any(expected in m for m in messages), messages


# Invisible ones too ("d1" + U+200B looks like d1 everywhere): zero-width space and joiner, soft
# hyphen, right-to-left override, isolates, word joiner. (Candidates: test_pooling.py.)
BAD_ID_CHARS = [
    "\x01",
    "\x7f",
    "\x85",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\t",
    "\u200b",
    "\u200d",
    "\xad",
    "\u202e",
    "\u2066",
    "\u2060",
]


@pytest.mark.parametrize("char", BAD_ID_CHARS)
def test_ids_hold_no_character_the_pool_readers_refuse(char: str) -> None:
    """A document ID with NEL, U+2028 or a BOM, once imported and frozen, would make the version's
    own exports fail to import back. Documents and queries take the readers' rule (candidates:
    test_pooling.py)."""
    from evaluation.formats.ids import bad_id_chars

    assert bad_id_chars(char)  # the pool readers' rule, which the imports must not be looser than
    code = f"U+{ord(char):04X}"
    value = json.dumps(f"C{char}X")
    for call, field in (
        (lambda: read_documents(f'{{"doc_id": {value}, "body": "b"}}\n'.encode(), "jsonl"), "doc_id"),
        (lambda: read_queries(f'{{"query_id": {value}, "text": "t"}}\n'.encode(), "jsonl"), "query_id"),
    ):
        (message,) = problems(call)
        assert message.startswith(f"Line 1, field “{field}”, value “C"), message
        assert f"contains the character {code}; IDs cannot hold control characters" in message
    # At the end of an ID too, where str.strip() would call it a space.
    (message,) = problems(
        lambda: read_queries(f'{{"query_id": {json.dumps("Q" + char)}, "text": "t"}}\n'.encode(), "jsonl")
    )
    assert f"contains the character {code}" in message, message


def test_an_error_shows_a_line_break_inside_a_value_escaped_on_one_line() -> None:
    """`import_documents` prints the value escaped, so a line break does not split the error."""
    messages = problems(lambda: read_documents('doc_id,body\n"d\nx",b\n"e\u2028y",b\n'.encode(), "csv"))
    assert messages[0].startswith("Line 2, field “doc_id”, value “d\\nx”: contains the character U+000A")
    assert messages[1].startswith("Line 4, field “doc_id”, value “e\\u2028y”: contains the character U+2028")
    assert all(len(m.splitlines()) == 1 for m in messages)


def test_text_that_is_not_utf8_names_the_line() -> None:
    data = b"doc_id,body\nA,ok\nB," + "caf\u00e9".encode("latin-1") + b"\n"
    assert problems(lambda: read_documents(data, "csv")) == [
        "Line 3: the file is not UTF-8 text: byte 0xe9 at column 6. Save it as UTF-8 and upload again."
    ]


def test_every_bad_line_is_reported_up_to_a_limit_then_counted() -> None:
    data = "doc_id,body\n" + "".join(f"d{i},\n" for i in range(MAX_ERRORS + 5))
    messages = problems(lambda: read_documents(data.encode(), "csv"))
    assert len(messages) == MAX_ERRORS + 1
    assert messages[-1] == "More problems not listed here: 5."


def test_queries_are_read_with_their_information_need() -> None:
    records = read_queries(
        "query_id,text,information_need\nq1,怎么改电话？,入口、字段、截止时间\n".encode(), "csv"
    )
    assert [(r.external_id, r.text, r.information_need, r.line) for r in records] == [
        ("q1", "怎么改电话？", "入口、字段、截止时间", 2)
    ]
    assert any(
        "field “text”" in m
        for m in problems(lambda: read_queries(b'{"query_id": "q2", "text": ""}', "jsonl"))
    )


def test_a_query_text_or_information_need_longer_than_the_limit_is_refused_with_its_length() -> None:
    """A query "text" of megabytes would make every page showing it as large."""
    from annotator.documents.readers import QUERY_TEXT_MAX_LENGTH

    fine = "x" * QUERY_TEXT_MAX_LENGTH
    assert read_queries(json.dumps({"query_id": "q1", "text": fine}).encode(), "jsonl")[0].text == fine
    long = json.dumps(
        {"query_id": "q1", "text": fine + "y", "information_need": "n" * (QUERY_TEXT_MAX_LENGTH + 2)}
    )
    messages = problems(lambda: read_queries(long.encode(), "jsonl"))
    assert any(
        "field “text”" in m and "is longer than 10000 characters (it has 10001)" in m for m in messages
    ), messages
    assert any("field “information_need”" in m and "(it has 10002)" in m for m in messages), messages


def test_a_jsonl_id_is_text_or_a_whole_number_not_a_float() -> None:
    """1.5 and 1e2 would be stored as the IDs "1.5" and "100.0"."""
    assert [r.external_id for r in read_documents(b'{"doc_id": 7, "body": "b"}', "jsonl")] == ["7"]
    messages = problems(lambda: read_documents(b'{"doc_id": 1e2, "body": "b"}', "jsonl"))
    # Quoted as the file writes it: "not 1e2", not "not 100.0".
    assert any(
        "Line 1, field \u201cdoc_id\u201d" in m and "an ID must be text or a whole number, not 1e2" in m
        for m in messages
    ), messages


def test_format_comes_from_the_name_unless_declared() -> None:
    assert [detect_format(n) for n in ("a.csv", "b.JSONL", "c.ndjson", "run.trec", "results")] == [
        "csv",
        "jsonl",
        "jsonl",
        "trec",
        "trec",
    ]
    assert detect_format("a.csv", "jsonl") == "jsonl"


def test_json_text_with_line_separators_is_one_line_and_later_lines_keep_their_numbers() -> None:
    """splitlines() would cut a valid JSONL line at U+2028 (which json.dumps(ensure_ascii=False)
    writes) and number every later line one too high."""
    data = '{"doc_id": "ls1", "body": "line\u2028sep\u0085x"}\n{"doc_id": "", "body": "y"}\n'.encode()
    with pytest.raises(ImportFileError) as refused:
        read_documents(data, "jsonl")
    assert str(refused.value).startswith("Line 2, field “doc_id”")
    (record,) = read_documents('{"doc_id": "ls1", "body": "line\u2028sep"}\n'.encode(), "jsonl")
    assert record.body == "line\u2028sep"
