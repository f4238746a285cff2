"""Runs: uploaded in four formats, kept byte for byte, parsed by the engine's readers, refused
with the line and the value when wrong, and only for reviewers and owners."""

from __future__ import annotations

import hashlib
import html as html_module
import re
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from evaluation import formats, metrics
from evaluation.formats.lists import parse_ranked_lists
from evaluation.models import ImmutableFieldError, Run, RunQuery
from evaluation.runs import RunUploadError, run_parse
from tests.conftest import Cast
from tests.factories import E9_POOL, make_pool, make_run

TREC = b"q1 Q0 C 1 9.5 sys\nq1 Q0 A 2 8.25 sys\nq2 Q0 J-A 1 3 sys\n"
CSV = "query_id,doc_id,rank\nq1,C,1\nq1,A,2\n问题二,文档甲,1\n".encode()
JSONL = b'{"query_id": "q1", "doc_id": "C", "score": 2.5}\n{"query_id": "q1", "doc_id": "A", "score": 1.5}\n'


@pytest.mark.parametrize(
    ("fmt", "data", "expected"),
    [
        ("trec", TREC, {"q1": ("C", "A"), "q2": ("J-A",)}),
        ("csv", CSV, {"q1": ("C", "A"), "问题二": ("文档甲",)}),
        ("jsonl", JSONL, {"q1": ("C", "A")}),
        ("lists", "q1: C, A, D\nq2：J-B，J-A\n".encode(), {"q1": ("C", "A", "D"), "q2": ("J-B", "J-A")}),
    ],
)
def test_every_format_is_stored_byte_for_byte_and_parsed_in_order(
    cast: Cast, fmt: str, data: bytes, expected: dict[str, tuple[str, ...]]
) -> None:
    run = Run.objects.get(
        pk=make_run(
            cast.alpha, "sys", text=data.decode(), fmt=fmt, file_name=f"run.{fmt}", by=cast.reviewer
        ).pk
    )
    assert bytes(run.raw) == data
    assert run.sha256 == hashlib.sha256(data).hexdigest()
    assert run.size == len(data)
    engine_run = run.engine_run()
    assert {q: engine_run.ranking(q) for q in engine_run.query_ids} == expected
    assert run.query_count == len(expected)
    assert run.entry_count == sum(map(len, expected.values()))


def test_stored_columns_give_back_the_engine_reader_run_exactly(cast: Cast) -> None:
    import io

    stream = io.StringIO(TREC.decode())
    stream.name = "run.trec"
    original = formats.read_run(stream, format="trec")
    run = Run.objects.get(pk=make_run(cast.alpha, "t", text=TREC.decode(), fmt="trec", by=cast.reviewer).pk)
    restored = run.engine_run()
    assert restored.as_dict() == original.as_dict()
    assert [restored.lines_of(q) for q in restored.query_ids] == [
        original.lines_of(q) for q in original.query_ids
    ]


def test_the_run_page_previews_the_first_rows_without_decoding_or_loading_the_rest(
    cast: Cast, client: Client
) -> None:
    """Showing ten rows of a one-query run of 1.1M rows decodes ten, not the whole run."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evaluation.views import PREVIEW_DEPTH

    text = "".join(f"q1 Q0 d{i} {i + 1} {100 - i}.5 s\n" for i in range(40))
    run = make_run(cast.alpha, "deep", text=text, fmt="trec", by=cast.reviewer)
    row = RunQuery.objects.get(run=run)
    full = row.ranking()
    assert len(full.doc_ids) == 40
    for limit in (0, 1, PREVIEW_DEPTH, 40, 41):
        head = row.ranking(limit=limit)
        assert head.doc_ids == full.doc_ids[:limit]
        assert head.scores == full.scores[:limit]  # type: ignore[index]
        assert head.lines == full.lines[:limit]
    client.force_login(cast.reviewer)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("run_detail", kwargs={"slug": cast.alpha.slug, "run_id": run.pk}))
    assert page.status_code == 200
    assert [item["doc"] for item in page.context["preview"][0]["rows"]] == [
        f"d{i}" for i in range(PREVIEW_DEPTH)
    ]
    assert not any('"raw"' in query["sql"] for query in queries.captured_queries)


def test_pasted_lists_leave_out_a_query_with_no_ids_and_skip_comments() -> None:
    """ "q2:" says the system returned nothing for q2: the run does not answer it, as a run file
    would say it (no lines), so the comparison's export reproduces its counts."""
    run = parse_ranked_lists("# system X\nq1: A, B,\n\nq2:\nq3: C D，E\n", source="pasted.txt", name="x")
    assert run.query_ids == ("q1", "q3")
    assert "q2" not in run
    assert run.ranking("q1") == ("A", "B")  # one trailing comma is fine
    assert run.ranking("q3") == ("C", "D", "E")  # spaces and full-width commas separate too
    assert run.lines_of("q1") == (2, 2)
    # Still one line per query: a query listed empty, then again, is refused like any repeat.
    with pytest.raises(metrics.EvaluationError, match="listed twice"):
        parse_ranked_lists("q2:\nq2: A\n", source="pasted.txt", name="x")


@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        ("lists", "q1: A, B\nq1: C\n", ["line 2", "“q1”", "lines 1 and 2"]),
        ("lists", "q1: A, B, A\n", ["line 1", "“A”", "appears twice"]),
        ("lists", "q1 A B\n", ["line 1", "no colon"]),
        ("lists", ": A, B\n", ["line 1", "empty"]),
        # Two commas in a row most likely lost an ID: refused, not closed up into "A, B".
        ("lists", "q1: A, B\nq2: A,,B\n", ["line 2", "“q2”", "an empty entry between two commas (entry 2)"]),
        ("trec", "q1 Q0 A 1 2.0 sys\nq1 Q0 B 2\n", ["line 2", "6 fields"]),
        ("trec", "q1 Q0 A 1 2.0 sys\nq1 Q0 A 2 1.0 sys\n", ["line 2", "“A”", "twice"]),
        ("trec", "q1 Q0 A 1 high sys\n", ["line 1", "“high”"]),
        ("csv", "query_id,doc_id\nq1,A\n", ["score", "rank"]),
        ("jsonl", '{"query_id": "q1", "doc_id": "A", "score": 1}\n{"query_id": "q1"\n', ["line 2"]),
    ],
)
def test_a_bad_run_file_is_refused_naming_the_line_and_the_value(
    fmt: str, text: str, expected: list[str]
) -> None:
    with pytest.raises(RunUploadError) as error:
        run_parse(data=text.encode(), fmt=fmt, file_name=f"bad.{fmt}")
    for part in expected:
        assert part in str(error.value)


def test_text_that_is_not_utf8_is_refused_with_its_line() -> None:
    with pytest.raises(RunUploadError, match="line 2.*UTF-8"):
        run_parse(data=b"q1: A\nq2: \xff\xfe\n", fmt="lists", file_name="pasted.txt")


@pytest.mark.parametrize("fmt", ["trec", "csv", "jsonl"])
def test_file_formats_are_read_from_the_bytes_with_a_bom_and_windows_line_ends(fmt: str) -> None:
    rows = [("q1", "A", 2.5), ("q1", "B", 1.0), ("q2", "C", 3.0)]
    lines = {
        "trec": [f"{q} Q0 {d} {i} {s} t" for i, (q, d, s) in enumerate(rows, 1)],
        "csv": ["query_id,doc_id,score"] + [f"{q},{d},{s}" for q, d, s in rows],
        "jsonl": [f'{{"query_id": "{q}", "doc_id": "{d}", "score": {s}}}' for q, d, s in rows],
    }[fmt]
    data = "\ufeff".encode() + "\r\n".join(lines).encode() + b"\r\n"
    run = run_parse(data=data, fmt=fmt, file_name=f"run.{fmt}")
    assert run.as_dict() == {"q1": [("A", 2.5), ("B", 1.0)], "q2": [("C", 3.0)]}
    line = 3 if fmt == "csv" else 2  # B's line, after the CSV header
    with pytest.raises(RunUploadError, match=rf"run\.{fmt}, line {line}: the file is not UTF-8"):
        run_parse(data=data.replace(b"B", b"\xff"), fmt=fmt, file_name=f"run.{fmt}")


def test_reading_a_run_file_holds_little_more_than_its_bytes() -> None:
    # Measured on a 21 MB TREC run: the text in a StringIO (4 bytes a character) made the peak
    # 164 MB on top of the bytes; read from the bytes it is 57 MB, the parsed run included.
    data = b"".join(
        b"q%05d Q0 helpcenter-article-%08d %d %d.5 bm25\n" % (q, q * 100 + r, r + 1, 100 - r)
        for q in range(300)
        for r in range(100)
    )
    tracemalloc.start()
    try:
        run = run_parse(data=data, fmt="trec", file_name="run.txt")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert run.rows == 30_000
    assert peak < 4 * len(data), f"peak {peak / len(data):.1f}x the file's size"


def test_a_nul_character_is_refused_with_its_line() -> None:
    # PostgreSQL cannot store NUL in text; SQLite would take it: refused on both alike.
    with pytest.raises(RunUploadError, match="pasted.txt, line 2: the file contains a NUL character"):
        run_parse(data=b"q1: A\nq2: B\x00C\n", fmt="lists", file_name="pasted.txt")


def test_an_empty_upload_is_refused() -> None:
    with pytest.raises(RunUploadError, match="no rankings"):
        run_parse(data=b"# nothing\n\n", fmt="lists", file_name="pasted.txt")
    # Only empty lists: its export (a TREC file) would be empty, which `evaluate` refuses.
    with pytest.raises(RunUploadError, match="no rankings"):
        run_parse(data=b"q1:\nq2:\n", fmt="lists", file_name="pasted.txt")


def test_pasted_lines_are_counted_as_editors_count_them_and_a_query_may_hold_a_colon() -> None:
    """Lines break at line feeds only (splitlines() also breaks at form feeds and U+2028, shifting
    every later line number), and "http://x: A" names query "http://x", not "http"."""
    with pytest.raises(RunUploadError, match="pasted.txt, line 3: ") as refused:
        run_parse(data="q1: A\f\nq2: B\u2028C\nq3 C\n".encode(), fmt="lists", file_name="pasted.txt")
    assert "no colon" in str(refused.value)
    run = parse_ranked_lists("http://x/q?id=1: A, B\nq2:C\n问题三：甲，乙\n", source="p", name="p")
    assert run.query_ids == ("http://x/q?id=1", "q2", "问题三")
    assert run.ranking("http://x/q?id=1") == ("A", "B") and run.ranking("q2") == ("C",)
    # The enumeration comma separates IDs too: read as one ID, "文档甲、文档乙" would score 0 silently.
    assert parse_ranked_lists("查询一: 文档甲、文档乙，文档丙\n", source="p", name="p").ranking("查询一") == (
        "文档甲",
        "文档乙",
        "文档丙",
    )


def test_a_query_id_too_long_for_any_pool_is_refused_with_its_line() -> None:
    """The refusal names the file, the ID and the line, like every other run error."""
    text = "q1 Q0 A 1 2.0 s\n" + "Q" * 300 + " Q0 A 1 2.0 s\n"
    with pytest.raises(
        RunUploadError, match=r"^file longq.run, line 2: query ID 'QQQ.*' is longer than 255 characters"
    ):
        run_parse(data=text.encode(), fmt="trec", file_name="longq.run")
    # Located as every other run error is, in either language ("文件 longq.run，第 2 行").
    from django.utils import translation

    with translation.override("zh-hans"), pytest.raises(RunUploadError, match=r"^文件 longq.run，第 2 行："):
        run_parse(data=text.encode(), fmt="trec", file_name="longq.run")
    with translation.override("zh-hans"), pytest.raises(RunUploadError, match=r"^文件 bad.trec，第 2 行："):
        run_parse(data=b"q1 Q0 A 1 2.0 s\nq1 Q0 \xff 2 1.0 s\n", fmt="trec", file_name="bad.trec")


@pytest.mark.parametrize("char", ["\x85", "\u2028", "\u2029", "\x1f"])
def test_a_pasted_id_holding_a_character_no_id_may_hold_is_refused_not_split_in_two(char: str) -> None:
    """str.split() splits at these too: "B<U+2028>C" would become the two IDs B and C."""
    with pytest.raises(
        RunUploadError, match=f"pasted.txt, line 2: document ID .* contains the character U\\+{ord(char):04X}"
    ):
        run_parse(data=f"q1: A\nq2: B{char}C, D\n".encode(), fmt="lists", file_name="pasted.txt")
    # At an ID's start or end too, where str.strip() would drop it and store "B".
    for text in (f"q1: A, B{char}\n", f"q1: {char}A, B\n", f"q1{char}: A\n"):
        with pytest.raises(
            RunUploadError, match=f"pasted.txt, line 1: .* contains the character U\\+{ord(char):04X}"
        ):
            run_parse(data=text.encode(), fmt="lists", file_name="pasted.txt")
    # Every Unicode space still separates IDs: the full-width one, a no-break space, a tab.
    run = parse_ranked_lists("q1: 甲\u3000乙\u00a0丙\t丁 , 戊\n", source="p", name="p")
    assert run.ranking("q1") == ("甲", "乙", "丙", "丁", "戊")


@pytest.mark.parametrize(
    ("text", "policies", "expected"),
    [
        ("q1: A, X\n", {}, ["line 1", "“X”", "unjudged"]),
        # The run is named as the form names it, not "pasted.txt".
        ("q1: A\nq9: A\n", {}, ["“q9”", "of run “strict” is not in the pool"]),
        (
            "q2: A\n",
            {"missing_queries": "error", "extra_queries": "ignore"},
            ["“q1”", "missing from run “strict”"],
        ),
    ],
)
def test_a_run_checked_against_a_pool_at_upload_is_refused_under_strict_policies(
    cast: Cast, client: Client, text: str, policies: dict[str, str], expected: list[str]
) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    client.force_login(cast.reviewer)
    data = {
        "name": "strict",
        "format": "auto",
        "text": text,
        "check_against": version.pk,
        "k": 3,
        "unjudged": "error",
        "ties": "error",
        "missing_queries": "zero",
        "extra_queries": "error",
        **policies,
    }
    response = client.post(reverse("run_upload", kwargs={"slug": "alpha"}), data)
    assert response.status_code == 200
    html = response.content.decode()
    for part in expected:
        assert part.replace("'", "&#x27;") in html
    assert not Run.objects.exists()


def test_tied_scores_are_refused_at_upload_under_the_error_policy_with_their_lines(
    cast: Cast, client: Client
) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    client.force_login(cast.reviewer)
    upload = SimpleUploadedFile("tied.trec", b"q1 Q0 A 1 2.0 s\nq1 Q0 B 2 2.0 s\n")
    data = {
        "name": "tied",
        "format": "auto",
        "file": upload,
        "check_against": version.pk,
        "k": 2,
        "unjudged": "error",
        "ties": "error",
        "missing_queries": "zero",
        "extra_queries": "error",
    }
    html = client.post(reverse("run_upload", kwargs={"slug": "alpha"}), data).content.decode()
    assert "share the score 2.0" in html and "lines 1, 2" in html
    # The refusal names the version it checked against, preselected or chosen.
    assert html_module.unescape(html).count(f"Checked against {version}: ") == 1
    assert not Run.objects.exists()


def test_the_version_pages_upload_link_checks_against_that_version(cast: Cast, client: Client) -> None:
    """The upload form preselects the version whose page the person came from, not the project's
    newest, which would refuse a run that fits the one they meant."""
    older = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    newest = make_pool(cast.alpha, {"q1": {"A": 1}}, by=cast.owner)
    client.force_login(cast.reviewer)
    page = client.get(
        reverse(
            "pool_version_detail", kwargs={"slug": "alpha", "pool_id": older.pool_id, "version_id": older.pk}
        )
    ).content.decode()
    link = f"{reverse('run_upload', kwargs={'slug': 'alpha'})}?check_against={older.pk}"
    assert f'href="{link}"' in page
    form = client.get(link).content.decode()
    assert f'<option value="{older.pk}" selected>' in form
    plain = client.get(reverse("run_upload", kwargs={"slug": "alpha"})).content.decode()
    assert f'<option value="{newest.pk}" selected>' in plain  # without it: the newest, as before


def test_the_same_tied_run_is_accepted_under_trec_evals_tie_rule(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    client.force_login(cast.reviewer)
    upload = SimpleUploadedFile("tied.trec", b"q1 Q0 A 1 2.0 s\nq1 Q0 B 2 2.0 s\n")
    data = {
        "name": "tied",
        "format": "auto",
        "file": upload,
        "check_against": version.pk,
        "k": 2,
        "unjudged": "error",
        "ties": "docid-desc",
        "missing_queries": "zero",
        "extra_queries": "error",
    }
    response = client.post(reverse("run_upload", kwargs={"slug": "alpha"}), data)
    run = Run.objects.get()
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert run.format == "trec" and run.file_name == "tied.trec" and run.has_scores


def test_the_upload_form_checks_against_the_newest_version_only_when_the_project_has_one_pool(
    cast: Cast, client: Client
) -> None:
    """With two pools no version is preselected: a run for the other pool would be refused for a
    check nobody chose."""
    client.force_login(cast.reviewer)
    url = reverse("run_upload", kwargs={"slug": "alpha"})

    def selected() -> str | None:
        html = client.get(url).content.decode()
        field = html[
            html.index('name="check_against"') : html.index("</select>", html.index('name="check_against"'))
        ]
        found = re.search(r'<option value="(\d*)" selected>', field)
        return found.group(1) if found else None

    assert selected() == ""  # no pool yet: "Do not check now"
    make_pool(cast.alpha, E9_POOL, by=cast.owner, name="Phone")
    newest = make_pool(cast.alpha, E9_POOL, by=cast.owner, name="Phone")
    assert selected() == str(newest.pk)  # one pool: its newest version
    make_pool(cast.alpha, {"other": {"X": 1}}, by=cast.owner, name="Other")
    assert selected() == ""  # two pools: no guess, "Do not check now"


def test_upload_page_full_page_and_htmx_fragment(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    url = reverse("run_upload", kwargs={"slug": "alpha"})
    full = client.get(url)
    assert full.status_code == 200 and b"<html" in full.content and b'id="upload-form"' in full.content
    fragment = client.post(url, {"name": "x", "format": "auto"}, headers={"HX-Request": "true"})
    assert fragment.status_code == 200
    assert b"<html" not in fragment.content and b'id="upload-form"' in fragment.content
    assert b"Choose a run file or paste the rankings." in fragment.content


def test_a_successful_htmx_upload_redirects_the_whole_page(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    response = client.post(
        reverse("run_upload", kwargs={"slug": "alpha"}),
        {
            "name": "bm25",
            "format": "auto",
            "text": "q1: A, B\n",
            "k": 10,
            "unjudged": "error",
            "ties": "error",
            "missing_queries": "zero",
            "extra_queries": "error",
        },
        headers={"HX-Request": "true"},
    )
    run = Run.objects.get(name="bm25")
    assert response.status_code == 200
    assert response["HX-Redirect"] == run.get_absolute_url()
    assert run.uploaded_by == cast.reviewer and run.format == "lists" and bytes(run.raw) == b"q1: A, B\n"
    # One query is "1 query", not "1 queries", in the message and the run choices.
    page = client.get(run.get_absolute_url()).content.decode()
    assert "Run “bm25” uploaded: 1 query, 2 ranked entries." in page
    choices = client.get(reverse("comparison_create", kwargs={"slug": "alpha"})).content.decode()
    assert "bm25 · pasted.txt · 1 query<" in choices


def test_a_file_and_pasted_text_together_are_refused(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    response = client.post(
        reverse("run_upload", kwargs={"slug": "alpha"}),
        {
            "name": "both",
            "format": "auto",
            "text": "q1: A\n",
            "file": SimpleUploadedFile("r.trec", TREC),
            "k": 10,
            "unjudged": "error",
            "ties": "error",
            "missing_queries": "zero",
            "extra_queries": "error",
        },
    )
    assert response.content.count(b"not both") == 1  # once, not twice
    assert not Run.objects.exists()


def test_a_second_run_with_the_same_name_is_refused(cast: Cast, client: Client) -> None:
    make_run(cast.alpha, "bm25", {"q1": ["A"]}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    response = client.post(
        reverse("run_upload", kwargs={"slug": "alpha"}),
        {
            "name": "bm25",
            "format": "auto",
            "text": "q1: B\n",
            "k": 10,
            "unjudged": "error",
            "ties": "error",
            "missing_queries": "zero",
            "extra_queries": "error",
        },
    )
    assert "already exists" in response.content.decode()
    assert Run.objects.count() == 1


def test_editors_cannot_upload_list_or_download_runs(cast: Cast, client: Client) -> None:
    run = make_run(cast.alpha, "bm25", {"q1": ["A"]}, by=cast.reviewer)
    client.force_login(cast.editor)
    for name, kwargs in [
        ("run_list", {}),
        ("run_upload", {}),
        ("run_detail", {"run_id": run.pk}),
        ("run_download", {"run_id": run.pk}),
    ]:
        url = reverse(name, kwargs={"slug": "alpha", **kwargs})
        assert client.get(url).status_code == 403, name
    assert (
        client.post(
            reverse("run_upload", kwargs={"slug": "alpha"}), {"name": "x", "text": "q1: A"}
        ).status_code
        == 403
    )
    assert Run.objects.count() == 1


def test_upload_refuses_methods_other_than_get_and_post(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    assert client.put(reverse("run_upload", kwargs={"slug": "alpha"})).status_code == 405
    assert client.delete(reverse("run_list", kwargs={"slug": "alpha"})).status_code == 405


def test_download_gives_back_the_uploaded_bytes_and_file_name(cast: Cast, client: Client) -> None:
    run = make_run(
        cast.alpha, "chinese", text=CSV.decode(), fmt="csv", file_name="系统甲.csv", by=cast.reviewer
    )
    client.force_login(cast.owner)
    response = client.get(reverse("run_download", kwargs={"slug": "alpha", "run_id": run.pk}))
    assert response.content == CSV
    assert response["X-Content-SHA256"] == hashlib.sha256(CSV).hexdigest()
    assert "filename*=utf-8''%E7%B3%BB%E7%BB%9F%E7%94%B2.csv" in response["Content-Disposition"]


def test_run_list_and_detail_show_the_run_to_reviewers(cast: Cast, client: Client) -> None:
    run = make_run(cast.alpha, "bm25", {"q1": ["C", "A"]}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    listing = client.get(reverse("run_list", kwargs={"slug": "alpha"}))
    assert b"bm25" in listing.content and run.sha256[:12].encode() in listing.content
    fragment = client.get(reverse("run_list", kwargs={"slug": "alpha"}), headers={"HX-Request": "true"})
    assert b"<html" not in fragment.content and b'id="run-table"' in fragment.content
    detail = client.get(run.get_absolute_url()).content.decode()
    assert run.sha256 in detail and "<code>C</code>" in detail


def test_a_run_never_changes_after_upload(cast: Cast) -> None:
    run = Run.objects.get(pk=make_run(cast.alpha, "bm25", {"q1": ["A"]}, by=cast.reviewer).pk)
    run.raw = b"q1: B\n"
    with pytest.raises(ImmutableFieldError):
        run.save()
    with pytest.raises(ImmutableFieldError):
        Run.objects.filter(pk=run.pk).update(raw=b"q1: B\n")
    with pytest.raises(ImmutableFieldError):
        RunQuery.objects.filter(run=run).update(doc_ids="B")
    row = RunQuery.objects.get(run=run)
    row.doc_ids = "B"
    with pytest.raises(ImmutableFieldError):
        row.save()
    fresh = Run.objects.get(pk=run.pk)
    fresh.notes = "notes may change"
    fresh.save()
    assert bytes(Run.objects.get(pk=run.pk).raw) == b"q1: A\n"


def test_ids_with_a_tab_cannot_be_stored_because_no_pool_can_hold_them() -> None:
    data = b'{"query_id": "q1", "doc_id": "A\\tB", "score": 1}\n'
    with pytest.raises(
        RunUploadError, match=r"contains the character U\+0009; IDs cannot hold control characters, tabs"
    ):
        run_parse(data=data, fmt="jsonl", file_name="r.jsonl")


@pytest.mark.parametrize(
    ("ranked", "code"), [("A\x01B", "U+0001"), ("\ufeffA", "U+FEFF"), ("A\x9fB", "U+009F")]
)
def test_pasted_lists_take_the_file_readers_rule_for_ids(cast: Cast, ranked: str, code: str) -> None:
    """Pasted lists are split at whitespace only, so a control character or a BOM must be refused."""
    with pytest.raises(
        RunUploadError,
        match=rf"pasted\.txt, line 2: document ID '.+' contains the character {re.escape(code)}",
    ):
        make_run(cast.alpha, "pasted", text=f"q1: A\nq2: {ranked}\n", by=cast.reviewer)
    assert not Run.objects.filter(name="pasted").exists()


def test_engine_run_of_a_scored_run_keeps_scores_for_the_tie_policy(cast: Cast) -> None:
    run = Run.objects.get(pk=make_run(cast.alpha, "t", text=TREC.decode(), fmt="trec", by=cast.reviewer).pk)
    engine_run = run.engine_run()
    assert engine_run.has_scores
    assert engine_run.scores_of("q1") == (9.5, 8.25)
    assert metrics.order_scored(zip(engine_run.ranking("q1"), engine_run.scores_of("q1"), strict=True)) == [
        ("C", 9.5),
        ("A", 8.25),
    ]


def test_tied_documents_and_their_lines_are_listed_in_the_pages_quotes_and_separator() -> None:
    """The page's tie refusal quotes documents “so”, as the rest of its sentence, not 'A', 'B' (the
    command line's quotes), and zh-Hans lists the lines with its own separator, not "第 1, 2 行"."""
    import io

    from django.utils import translation

    from annotator.web.errors import describe_error
    from evaluation import formats, metrics

    stream = io.StringIO("q1 Q0 A 1 1.0 s\nq1 Q0 B 2 1.0 s\n")
    stream.name = "tied.run"
    run = formats.read_run(stream, format="trec", name="tied.run")
    with pytest.raises(metrics.EvaluationError) as caught:
        metrics.evaluate_run({"q1": {"A": 1, "B": 0}}, run)
    assert "documents 'A', 'B' share the score 1.0 at ranks 1-2 (lines 1, 2)" in str(caught.value)  # the CLI
    with translation.override("en"):
        assert "documents “A”, “B” share the score 1.0 at ranks 1-2 (lines 1, 2)" in describe_error(
            caught.value
        )
    with translation.override("zh-hans"):
        text = describe_error(caught.value)
    assert "文档 “A”，“B” 在第 1-2 名" in text and "（第 1，2 行）" in text
