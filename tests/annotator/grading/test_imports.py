"""Imports: all or nothing, re-imports version changed documents and flag their grades stale."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotator.documents.readers import ImportFileError, read_documents
from annotator.documents.services import ImportSummary, documents_import, queries_import
from annotator.grading.pooling import PooledPair, pool_top_k, read_run
from annotator.grading.services import candidates_add, grade_submit
from annotator.models import Candidate, CandidateSource, Document, DocumentVersion, Grade, GradingSet, Query
from tests.conftest import Cast
from tests.factories import make_pairs, make_set


def import_csv(cast: Cast, text: str) -> ImportSummary:
    return documents_import(project=cast.alpha, records=read_documents(text.encode(), "csv"))


def test_a_first_import_creates_every_document_at_version_1(cast: Cast) -> None:
    summary = import_csv(cast, "doc_id,title,body\nA,Title A,Body A\nB,Title B,Body B\n")
    assert (summary.created, summary.updated, summary.unchanged) == (2, 0, 0)
    assert sorted(Document.objects.filter(project=cast.alpha).values_list("external_id", "version")) == [
        ("A", 1),
        ("B", 1),
    ]
    assert DocumentVersion.objects.filter(document__project=cast.alpha).count() == 2


def test_a_reimport_versions_changed_documents_flags_their_grades_and_leaves_the_rest(cast: Cast) -> None:
    import_csv(cast, "doc_id,title,body\nA,Title A,Body A\nB,Title B,Body B\n")
    a, b = make_pairs(cast.alpha, "AB")
    grade_submit(candidate=a, editor=cast.editor, value=3)
    grade_submit(candidate=b, editor=cast.editor, value=1)
    summary = import_csv(
        cast, "doc_id,title,body\nA,Title A,Body A now with a deadline\nB,Title B,Body B\nC,,New\n"
    )
    assert (summary.created, summary.updated, summary.unchanged, summary.stale_grades) == (1, 1, 1, 1)
    doc_a = Document.objects.get(project=cast.alpha, external_id="A")
    assert doc_a.version == 2 and doc_a.body == "Body A now with a deadline"
    assert list(doc_a.versions.values_list("version", "body")) == [
        (1, "Body A"),
        (2, "Body A now with a deadline"),
    ]
    grade_a, grade_b = Grade.objects.get(candidate=a), Grade.objects.get(candidate=b)
    assert (grade_a.stale, grade_a.stale_reason, grade_a.document_version.version) == (True, "document", 1)
    assert grade_b.stale is False


def test_changed_documents_are_stored_in_batches_not_one_save_each(cast: Cast) -> None:
    """Two queries per changed document would hold SQLite's write lock for long while grade saves
    wait: as many queries for 60 changed documents as for 6."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for n in (6, 60):
        ids = [f"n{n}-{i}" for i in range(n)]
        import_csv(cast, "doc_id,title,body\n" + "".join(f"{d},T,old\n" for d in ids))
        before = Document.objects.get(project=cast.alpha, external_id=ids[0]).updated_at
        with CaptureQueriesContext(connection) as captured:
            summary = import_csv(cast, "doc_id,title,body\n" + "".join(f"{d},T {d},new {d}\n" for d in ids))
        counts.append(len(captured))
        assert (summary.updated, summary.created) == (n, 0)
        docs = Document.objects.filter(project=cast.alpha, external_id__in=ids)
        assert {(d.version, d.title, d.body) for d in docs} == {(2, f"T {d}", f"new {d}") for d in ids}
        assert all(d.updated_at > before for d in docs)
        assert (
            DocumentVersion.objects.filter(document__in=docs, version=2, body__startswith="new ").count() == n
        )
    assert counts[0] == counts[1]


def test_a_column_the_file_leaves_out_keeps_the_stored_value(cast: Cast) -> None:
    """A body-only re-import must not wipe every title (and URL, unit), make new versions and flag
    their grades. An empty cell or a JSON null still clears a field the file does give."""
    import_csv(
        cast, "doc_id,title,body,url,unit\nA,Title A,Body A,https://x.test/a,page\nB,Title B,Body B,,page\n"
    )
    assert import_csv(cast, "doc_id,body\nA,Body A\n").unchanged == 1
    summary = import_csv(cast, "doc_id,body\nA,Body A v2\n")
    assert (summary.updated, summary.unchanged) == (1, 0)
    a = Document.objects.get(project=cast.alpha, external_id="A")
    assert (a.version, a.title, a.body, a.url, a.unit) == (
        2,
        "Title A",
        "Body A v2",
        "https://x.test/a",
        "page",
    )
    assert a.versions.get(version=2).title == "Title A"
    jsonl = '{"doc_id": "B", "body": "Body B", "title": null}\n'
    documents_import(project=cast.alpha, records=read_documents(jsonl.encode(), "jsonl"))
    b = Document.objects.get(project=cast.alpha, external_id="B")
    assert (b.version, b.title, b.unit) == (2, "", "page")
    # A new document gets the defaults for what the file leaves out.
    import_csv(cast, "doc_id,body\nC,Body C\n")
    c = Document.objects.get(project=cast.alpha, external_id="C")
    assert (c.title, c.url, c.unit) == ("", "", "document")


def test_a_query_file_without_the_information_need_keeps_the_stored_one(cast: Cast) -> None:
    from annotator.documents.readers import read_queries

    queries_import(
        project=cast.alpha, records=read_queries(b"query_id,text,information_need\nq1,How?,Steps\n", "csv")
    )
    summary = queries_import(project=cast.alpha, records=read_queries(b"query_id,text\nq1,How?\n", "csv"))
    assert summary.unchanged == 1
    assert Query.objects.get(project=cast.alpha, external_id="q1").information_need == "Steps"
    queries_import(
        project=cast.alpha,
        records=read_queries(b'{"query_id": "q1", "text": "How?", "information_need": ""}\n', "jsonl"),
    )
    assert Query.objects.get(project=cast.alpha, external_id="q1").information_need == ""


def test_grades_in_closed_sets_are_not_flagged_by_a_reimport(cast: Cast) -> None:
    import_csv(cast, "doc_id,body\nA,old\n")
    (a,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=a, editor=cast.editor, value=3)
    a.grading_set.is_open = False
    a.grading_set.save()
    assert import_csv(cast, "doc_id,body\nA,new\n").stale_grades == 0
    assert Grade.objects.get().stale is False


def test_an_import_with_one_bad_line_imports_nothing_and_names_the_line(cast: Cast) -> None:
    import_csv(cast, "doc_id,body\nA,old text\n")
    with pytest.raises(ImportFileError) as info:
        import_csv(cast, "doc_id,body\nA,new text\nB,fine\nC,\n")
    assert info.value.messages() == [
        "Line 4, field “body”, value “”: is empty: editors grade the body, so every document needs one."
    ]
    assert list(Document.objects.filter(project=cast.alpha).values_list("external_id", "body")) == [
        ("A", "old text")
    ]


def test_the_store_step_is_all_or_nothing_too(cast: Cast) -> None:
    """A failure while storing (here: a forced error on the last batch) rolls back every batch."""
    records = read_documents(
        ("doc_id,body\n" + "".join(f"d{i},text {i}\n" for i in range(1500))).encode(), "csv"
    )
    calls = []

    def fail_at_the_end(done: int, total: int) -> None:
        calls.append(done)
        if done == total:
            raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        documents_import(project=cast.alpha, records=records, on_progress=fail_at_the_end)
    assert calls == [1000, 1500]
    assert not Document.objects.filter(project=cast.alpha).exists()


def test_queries_import_and_a_changed_query_flags_its_grades(cast: Cast) -> None:
    from annotator.documents.readers import read_queries

    (a,) = make_pairs(cast.alpha, "A", query="q1")
    grade_submit(candidate=a, editor=cast.editor, value=2)
    data = "query_id,text,information_need\nq1,Changed question?,x\nq9,New?,\n"
    summary = queries_import(project=cast.alpha, records=read_queries(data.encode(), "csv"))
    assert (summary.created, summary.updated, summary.unchanged, summary.stale_grades) == (1, 1, 0, 1)
    assert Query.objects.get(project=cast.alpha, external_id="q1").text == "Changed question?"
    assert Grade.objects.get().stale_reason == "query"


def test_pooled_candidates_record_each_run_and_position_and_unknown_ids_name_their_file_and_line(
    cast: Cast,
) -> None:
    import_csv(cast, "doc_id,body\nA,a\nB,b\nC,c\n")
    grading_set = make_set(cast.alpha, "Pooled")
    Query.objects.create(project=cast.alpha, external_id="q1", text="?")
    run1 = read_run("q1 Q0 A 1 3 bm25\nq1 Q0 B 2 2 bm25\nq1 Q0 C 3 1 bm25\n", "trec", "bm25.trec")
    run2 = read_run("query_id,doc_id,rank\nq1,C,1\nq1,A,2\n", "csv", "dense.csv")
    summary = candidates_add(
        grading_set=grading_set,
        pairs=pool_top_k([("bm25.trec", run1), ("dense.csv", run2)], 1),
        by=cast.owner,
        depth=1,
    )
    assert (summary.added, summary.already, summary.runs) == (2, 0, ["bm25", "dense.csv"])
    details = dict(
        Candidate.objects.filter(grading_set=grading_set).values_list(
            "document__external_id", "source_detail"
        )
    )
    assert details == {"A": "bm25 #1 (k=1)", "C": "dense.csv #1 (k=1)"}
    assert set(Candidate.objects.values_list("source", flat=True)) == {CandidateSource.POOLED}

    bad = read_run("q1 Q0 A 1 3 bm25\nq7 Q0 Z 2 2 bm25\n", "trec", "x.trec")
    with pytest.raises(ImportFileError) as info:
        candidates_add(
            grading_set=grading_set, pairs=pool_top_k([("x.trec", bad)], 5), by=cast.owner, depth=5
        )
    assert info.value.messages() == [
        "x.trec: Line 2, field “query_id”, value “q7”: no query with this ID in the project: import the "
        "queries first.",
        "x.trec: Line 2, field “doc_id”, value “Z”: no document with this ID in the project: import the "
        "documents first.",
    ]
    assert Candidate.objects.filter(grading_set=grading_set).count() == 2


def test_pairs_already_in_the_set_or_given_twice_are_counted_once_and_kept_as_first_given(
    cast: Cast,
) -> None:
    import_csv(cast, "doc_id,body\nA,a\nB,b\nC,c\nD,d\n")
    Query.objects.create(project=cast.alpha, external_id="q1", text="?")
    Query.objects.create(project=cast.alpha, external_id="q2", text="?")
    grading_set = make_set(cast.alpha, "Listed")
    first = [PooledPair("q1", "C", line=1, source="old.csv")]
    assert candidates_add(grading_set=grading_set, pairs=first, by=cast.owner).added == 1
    listed = [("q1", "A", 1), ("q2", "A", 2), ("q1", "A", 3), ("q1", "C", 4), ("q2", "B", 5), ("q2", "A", 6)]
    pairs = [PooledPair(q, d, line=line, source="pairs.csv") for q, d, line in listed]

    summary = candidates_add(grading_set=grading_set, pairs=pairs, by=cast.owner)

    # q1/A and q2/A again (lines 3 and 6) and q1/C, already in the set: three pairs not added again.
    assert (summary.added, summary.already) == (3, 3)
    stored = Candidate.objects.filter(grading_set=grading_set).values_list(
        "query__external_id", "document__external_id", "source_detail"
    )
    assert sorted(stored) == [
        ("q1", "A", "pairs.csv:1"),
        ("q1", "C", "old.csv:1"),
        ("q2", "A", "pairs.csv:2"),
        ("q2", "B", "pairs.csv:5"),
    ]


def test_the_import_commands_print_progress_and_a_summary(cast: Cast, tmp_path: Path) -> None:
    docs = tmp_path / "docs.jsonl"
    docs.write_text("\n".join(json.dumps({"doc_id": f"d{i}", "body": f"body {i}"}) for i in range(2500)))
    queries = tmp_path / "queries.csv"
    queries.write_text("query_id,text\nq1,Question one?\n")
    run = tmp_path / "bm25.trec"
    run.write_text("".join(f"q1 Q0 d{i} {i + 1} {100 - i} bm25\n" for i in range(50)))
    out, err = io.StringIO(), io.StringIO()
    call_command("import_documents", "alpha", str(docs), stdout=out, stderr=err)
    call_command("import_queries", "alpha", str(queries), stdout=out, stderr=err)
    call_command(
        "import_candidates", "alpha", "Pool", str(run), "--depth", "10", "--create", stdout=out, stderr=err
    )
    assert "created 2500, updated 0, unchanged 0" in out.getvalue()
    assert "documents: 2500 / 2500 (100%" in err.getvalue()
    assert "Pool: added 10 candidates, 0 already there (1 query; runs: bm25)" in out.getvalue()
    assert "Created grading set 'Pool'." in err.getvalue()
    assert "2500 documents valid" in err.getvalue() and "1 query valid" in err.getvalue()


def test_the_commands_say_only_what_happened(cast: Cast, tmp_path: Path) -> None:
    """--create says "Created grading set" only once no refusal can roll the set back, and
    --dry-run does not say "storing…"."""
    from annotator.models import GradingSet

    docs = tmp_path / "docs.csv"
    docs.write_text("doc_id,body\nA,a\n")
    err = io.StringIO()
    call_command("import_documents", "alpha", str(docs), "--dry-run", stdout=io.StringIO(), stderr=err)
    assert "storing" not in err.getvalue() and "nothing is stored" in err.getvalue()
    assert not Document.objects.exists()
    call_command("import_documents", "alpha", str(docs), stdout=io.StringIO(), stderr=(err := io.StringIO()))
    assert "1 document valid; storing…" in err.getvalue()

    run = tmp_path / "bm25.trec"
    run.write_text("q1 Q0 A 1 10 bm25\n")  # no query q1 in the project: refused
    err = io.StringIO()
    with pytest.raises(CommandError, match="no query with this ID"):
        call_command(
            "import_candidates", "alpha", "New set", str(run), "--create", stdout=io.StringIO(), stderr=err
        )
    assert "Created grading set" not in err.getvalue()
    assert not GradingSet.objects.filter(name="New set").exists()


def test_the_import_command_refuses_a_bad_file_and_stores_nothing(cast: Cast, tmp_path: Path) -> None:
    docs = tmp_path / "docs.csv"
    docs.write_text("doc_id,body\nA,ok\nA,again\n")
    with pytest.raises(CommandError, match=r"Line 3, field “doc_id”, value “A”: appears twice"):
        call_command("import_documents", "alpha", str(docs), stdout=io.StringIO(), stderr=io.StringIO())
    assert not Document.objects.exists()
    with pytest.raises(CommandError, match="No project with slug 'nope'") as refused:
        call_command("import_documents", "nope", str(docs), stdout=io.StringIO(), stderr=io.StringIO())
    assert refused.value.returncode == 2  # bad input, like `evaluate` (was 1, the crash status)


def test_the_import_command_says_a_zip_is_one_whatever_its_name(cast: Cast, tmp_path: Path) -> None:
    """A pool export given to import_documents is named a zip, not "does not end in .csv or .jsonl"."""
    import zipfile

    for name in ("export.zip", "export.bin"):
        archive = tmp_path / name
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("docs.csv", "doc_id,body\nA,b\n")
        with pytest.raises(
            CommandError, match="the file is a zip archive; upload the text file inside it instead"
        ):
            call_command(
                "import_documents", "alpha", str(archive), stdout=io.StringIO(), stderr=io.StringIO()
            )
    other = tmp_path / "docs.txt"
    other.write_text("doc_id,body\nA,b\n")
    with pytest.raises(CommandError, match=r"does not end in \.csv, \.jsonl or \.ndjson"):
        call_command("import_documents", "alpha", str(other), stdout=io.StringIO(), stderr=io.StringIO())
    assert not Document.objects.exists()


def test_a_refused_candidate_import_creates_no_set(cast: Cast, tmp_path: Path) -> None:
    """--create must not make the set before the import is refused, leaving it empty behind."""
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 NOPE 1 1.0 bm25\n")
    with pytest.raises(CommandError, match="NOPE") as refused:
        call_command(
            "import_candidates",
            "alpha",
            "New set",
            str(run),
            "--create",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    assert refused.value.returncode == 2
    assert not GradingSet.objects.filter(name="New set").exists()


def test_the_import_page_gives_every_field_its_own_id(cast: Cast, client: Client) -> None:
    # Three forms share field names (file, format): with one ID each, a label finds its own field.
    client.force_login(cast.owner)
    html = client.get(reverse("import_page", kwargs={"slug": "alpha"})).content.decode()
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    for kind in ("documents", "queries", "candidates"):
        assert f'for="id_{kind}_format"' in html and f'id="id_{kind}_format"' in html


def test_a_closed_set_takes_no_new_pairs_from_any_path_and_loses_none(
    cast: Cast, client: Client, tmp_path: Path
) -> None:
    """A frozen, closed set accepts no new candidates from the import form or by hand: pairs
    nobody could ever grade."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotator.grading.services import GradingError, candidate_remove, candidates_add_by_hand
    from annotator.models import Document
    from tests.factories import make_document

    (kept,) = make_pairs(cast.alpha, "A")
    closed = kept.grading_set
    closed.is_open = False
    closed.save()
    make_document(cast.alpha, "B")
    b = Document.objects.get(project=cast.alpha, external_id="B")
    with pytest.raises(GradingError, match="is closed"):
        candidates_add_by_hand(grading_set=closed, query=kept.query, documents=[b], by=cast.owner)
    with pytest.raises(GradingError, match="is closed"):
        candidate_remove(candidate=kept)

    client.force_login(cast.owner)
    upload = SimpleUploadedFile("run.trec", b"q1 Q0 B 1 3.0 bm25\n")
    html = client.post(
        reverse("import_candidates", kwargs={"slug": "alpha"}), {"grading_set": closed.pk, "files": [upload]}
    ).content.decode()
    assert "open grading sets (closed sets take no new pairs)" in html
    page = client.get(reverse("import_page", kwargs={"slug": "alpha"})).content.decode()
    assert f'<option value="{closed.pk}"' not in page

    response = client.post(
        reverse("candidate_add", kwargs={"slug": "alpha", "set_id": closed.pk}),
        {"query_id": "q1", "doc_ids": "B"},
        follow=True,
    )
    assert "is closed: its pairs can no longer be added or removed" in response.content.decode()
    detail = client.get(
        reverse("grading_set_detail", kwargs={"slug": "alpha", "set_id": closed.pk})
    ).content.decode()
    assert "This set is closed: its pairs can no longer be added or removed." in detail
    assert reverse("candidate_add", kwargs={"slug": "alpha", "set_id": closed.pk}) not in detail
    assert (
        reverse("candidate_remove", kwargs={"slug": "alpha", "set_id": closed.pk, "candidate_id": kept.pk})
        not in detail
    )
    assert list(Candidate.objects.filter(grading_set=closed)) == [kept]

    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 B 1 3.0 bm25\n")
    with pytest.raises(CommandError, match="is closed") as refused:
        call_command(
            "import_candidates", "alpha", closed.name, str(run), stdout=io.StringIO(), stderr=io.StringIO()
        )
    assert refused.value.returncode == 2
    assert list(Candidate.objects.filter(grading_set=closed)) == [kept]
