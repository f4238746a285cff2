"""Reading uploaded files (annotator/documents/readers.py): pure Python, no database.

Every error must name the line, the field and the value, and a file with any error yields no
records at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.utils import translation

from annotator.documents.readers import (
    MAX_ERRORS,
    ImportFileError,
    pool_top_k,
    read_documents,
    read_queries,
    read_run,
)
from evaluation.formats import write_run
from evaluation.formats.registry import detect_format
from evaluation.metrics import Run
from evaluation.metrics.ndcg import ranked_indices


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


@pytest.mark.parametrize(
    "char",
    # Invisible ones too ("d1" + U+200B looks like d1 everywhere): zero-width space and joiner,
    # soft hyphen, right-to-left override, isolates, word joiner.
    [
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
    ],
)
def test_ids_hold_no_character_the_pool_readers_refuse(char: str) -> None:
    """A document ID with NEL, U+2028 or a BOM, once imported and frozen, would make the version's
    own exports fail to import back. Documents, queries and candidates take the readers' rule."""
    from evaluation.formats.common import bad_id_chars

    assert bad_id_chars(char)  # the pool readers' rule, which the imports must not be looser than
    code = f"U+{ord(char):04X}"
    value = json.dumps(f"C{char}X")
    for call, field in (
        (lambda: read_documents(f'{{"doc_id": {value}, "body": "b"}}\n'.encode(), "jsonl"), "doc_id"),
        (lambda: read_queries(f'{{"query_id": {value}, "text": "t"}}\n'.encode(), "jsonl"), "query_id"),
        (lambda: read_run(f'{{"query_id": "q", "doc_id": {value}, "rank": 1}}\n', "jsonl", "r"), "doc_id"),
    ):
        (message,) = problems(call)
        assert message.startswith(f"Line 1, field “{field}”, value “C"), message
        assert f"contains the character {code}; IDs cannot hold control characters" in message
    # At the end of an ID too, where str.strip() would call it a space.
    (message,) = problems(
        lambda: read_queries(f'{{"query_id": {json.dumps("Q" + char)}, "text": "t"}}\n'.encode(), "jsonl")
    )
    assert f"contains the character {code}" in message, message


@pytest.mark.parametrize("char", ["\x1f", "\x85", "\u2028", "\u2029"])
def test_a_trec_candidates_file_is_split_where_trec_eval_splits(char: str) -> None:
    """str.split() would cut "d<NEL>x" into document "d" and a shifted line (score 2 from the rank
    column), pooled without a word; the comparison reader splits at C's whitespace only."""
    (message,) = problems(
        lambda: read_run(f"q1 Q0 A 1 3 t\nq1 Q0 d{char}x 2 2.5 t\n".encode(), "trec", "f.run")
    )
    assert message.startswith("Line 2, field “docno”"), message
    assert f"contains the character U+{ord(char):04X}" in message
    # A no-break or ideographic space is part of the ID, as trec_eval and the comparison reader read it.
    (row,) = read_run("q1 Q0 d\u00a0x 1 3 t\n".encode(), "trec", "f.run")
    assert (row.doc_id, row.score, row.run) == ("d\u00a0x", 3.0, "t")


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


def test_a_long_provenance_names_what_fits_and_counts_the_rest() -> None:
    """Cut at 500 characters, a pair pooled by 30 runs lost 23 of their names and its "(k=10)"."""
    from annotator.documents.readers import PROVENANCE_MAX_LENGTH, PooledPair

    pair = PooledPair("q1", "A", hits=[(f"run-number-{i:02d}", i + 1) for i in range(30)])
    text = pair.provenance(10)
    assert len(text) <= PROVENANCE_MAX_LENGTH and text.endswith(" (k=10)")
    named, rest = text.removesuffix(" (k=10)").rsplit(", … +", 1)
    assert len(named.split(", ")) + int(rest) == 30
    assert (
        PooledPair("q1", "A", hits=[("bm25", 3), ("dense", 1)]).provenance(10) == "bm25 #3, dense #1 (k=10)"
    )


def test_format_comes_from_the_name_unless_declared() -> None:
    assert [detect_format(n) for n in ("a.csv", "b.JSONL", "c.ndjson", "run.trec", "results")] == [
        "csv",
        "jsonl",
        "jsonl",
        "trec",
        "trec",
    ]
    assert detect_format("a.csv", "jsonl") == "jsonl"


TREC_RUN = """q1 Q0 D 1 0.9 bm25
q1 Q0 A 2 0.8 bm25
q1 Q0 C 3 0.8 bm25
q1 Q0 B 4 0.1 bm25
q2 Q0 X 1 5 bm25
"""


def test_a_trec_run_is_named_by_its_tag_and_ordered_by_score() -> None:
    rows = read_run(TREC_RUN, "trec", default_name="file.trec")
    assert {r.run for r in rows} == {"bm25"}
    pairs = pool_top_k([("file.trec", rows)], depth=1)
    assert [(p.query_id, p.doc_id, p.hits) for p in pairs] == [
        ("q1", "D", [("bm25", 1)]),
        ("q2", "X", [("bm25", 1)]),
    ]


def test_pooling_takes_the_union_of_each_runs_top_k_with_every_position() -> None:
    other = read_run("query_id,doc_id,rank\nq1,B,1\nq1,D,2\nq1,E,3\n", "csv", default_name="dense.csv")
    bm25 = read_run(TREC_RUN, "trec", default_name="bm25.trec")
    pairs = pool_top_k([("bm25.trec", bm25), ("dense.csv", other)], depth=2)
    found = {(p.query_id, p.doc_id): p.hits for p in pairs}
    # bm25's top 2 is D then a tie A/C at 0.8: both tied documents are pooled (trec_eval order: C before A).
    assert found == {
        ("q1", "D"): [("bm25", 1), ("dense.csv", 2)],
        ("q1", "C"): [("bm25", 2)],
        ("q1", "A"): [("bm25", 3)],
        ("q2", "X"): [("bm25", 1)],
        ("q1", "B"): [("dense.csv", 1)],
    }
    assert found[("q1", "D")] and pairs[0].provenance(2) == "bm25 #1, dense.csv #2 (k=2)"


def test_without_a_depth_every_listed_pair_is_pooled_in_file_order() -> None:
    rows = read_run(
        '{"query_id": "q1", "doc_id": "A"}\n{"query_id": "q1", "doc_id": "B"}\n',
        "jsonl",
        default_name="pairs",
    )
    assert [(p.doc_id, p.hits) for p in pool_top_k([("pairs.jsonl", rows)], None)] == [
        ("A", [("pairs", 1)]),
        ("B", [("pairs", 2)]),
    ]


@pytest.mark.parametrize("fmt", ["trec", "csv", "jsonl"])
def test_a_run_written_by_the_evaluation_formats_pools_in_the_engines_order(fmt: str, tmp_path: Path) -> None:
    """One run file serves both pooling and comparing: what the evaluation writers produce (the
    files a comparison exports), the pooling reader takes, with the same name and, per query, the
    order the engine ranks by under trec_eval's tie rule."""
    run = Run.from_scores(
        {"q1": [("A", 0.5), ("B", 2.0), ("C", 0.5), ("文档", 1.0)], "q2": [("X", -1.0)]}, name="bm25"
    )
    path = tmp_path / f"run.{fmt}"
    write_run(path, run, format=fmt)
    rows = read_run(path.read_bytes(), fmt, default_name=path.name)
    assert {row.run for row in rows} == {"bm25"}
    pooled = pool_top_k([(path.name, rows)], depth=None)
    for query in run.query_ids:
        scores = run.scores_of(query)
        assert scores is not None
        order = ranked_indices(run.ranking(query), list(scores), "docid-desc", k=None, query_id=query)
        engine = [run.ranking(query)[i] for i in order]
        assert [p.doc_id for p in pooled if p.query_id == query] == engine
    assert engine == ["X"] and [p.doc_id for p in pooled][:4] == ["B", "文档", "C", "A"]


@pytest.mark.parametrize(
    ("fmt", "data", "expected"),
    [
        ("trec", "q1 Q0 A 1 0.5\n", "Line 1: a TREC run line has 6 fields"),
        (
            "trec",
            "q1 Q0 A 1 high bm25\n",
            "Line 1, field “score”, value “high”: must be a finite number written with the digits 0-9",
        ),
        ("trec", "q1 Q0 A 1 nan bm25\n", "must be a finite number"),
        (
            "trec",
            "q1 Q0 A 1 1_000 bm25\n",
            "value “1_000”: must be a finite number written with the digits 0-9",
        ),
        ("trec", "q1 Q0 A 1 1e-400 bm25\n", "value “1e-400”: is too close to 0 to be told apart from it"),
        (
            "jsonl",
            '{"query_id": "q1", "doc_id": "A", "score": -1e-400}\n',
            "value “-1e-400”: is too close to 0",
        ),
        (
            "trec",
            "q1 Q0 A 1 0.5 r\nq1 Q0 A 2 0.4 r\n",
            "Line 2, field “doc_id”, value “A”: this document is already listed",
        ),
        ("csv", "query_id,doc_id,rank\nq1,A,1\nq1,B,1\n", "Line 3, field “rank”, value “1”: rank used twice"),
        (
            "csv",
            "query_id,doc_id,rank\nq1,A,first\n",
            "Line 2, field “rank”, value “first”: must be a whole number",
        ),
        ("csv", "query_id,doc_id,score,rank\nq1,A,0.5,\nq1,B,,2\n", "Line 3, field “score”"),
        (
            "csv",
            "query_id,doc_id,system\nq1,A,x\nq1,B,y\n",
            "field “system”, value “x, y”: one file holds one run",
        ),
        (
            "csv",
            "query_id,doc_id,rank\nq1,A,0\n",
            "Line 2, field “rank”, value “0”: must be 1 or more (rank 1 is the top",
        ),
        ("csv", "query_id,doc_id,run\nq1,A,x\n", "field “header”, value “run”: unknown column"),
    ],
)
def test_run_problems_are_named_precisely(fmt: str, data: str, expected: str) -> None:
    messages = problems(lambda: read_run(data, fmt, default_name="run"))
    assert any(expected in m for m in messages), messages


def test_json_text_with_line_separators_is_one_line_and_later_lines_keep_their_numbers() -> None:
    """splitlines() would cut a valid JSONL line at U+2028 (which json.dumps(ensure_ascii=False)
    writes) and number every later line one too high."""
    data = '{"doc_id": "ls1", "body": "line\u2028sep\u0085x"}\n{"doc_id": "", "body": "y"}\n'.encode()
    with pytest.raises(ImportFileError) as refused:
        read_documents(data, "jsonl")
    assert str(refused.value).startswith("Line 2, field “doc_id”")
    (record,) = read_documents('{"doc_id": "ls1", "body": "line\u2028sep"}\n'.encode(), "jsonl")
    assert record.body == "line\u2028sep"


def test_candidates_read_a_run_as_the_comparison_reader_does() -> None:
    """trec_eval's results.trunc (text after the tag) is accepted for pooling as for comparing,
    and a blank `system` cell is not a second system named ""."""
    from evaluation.formats import read_run as read_engine_run

    trunc = Path(__file__).resolve().parents[3].parent / "shared" / "oracles" / "trec_eval" / "results.trunc"
    rows = read_run(trunc.read_bytes(), "trec", "results.trunc")
    engine = read_engine_run(str(trunc), format="trec")
    assert {r.run for r in rows} == {"STANDARD"}
    assert len(rows) == engine.rows
    assert sorted((r.query_id, r.doc_id) for r in rows) == sorted(
        (q, d) for q in engine.query_ids for d in engine.ranking(q)
    )
    csv_rows = read_run(b"query_id,doc_id,rank,system\nq1,A,1,bm25\nq1,B,2,\n", "csv", "run.csv")
    assert {r.run for r in csv_rows} == {"bm25"}
