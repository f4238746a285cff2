"""Freezing a grading set into pool version N, the refusals, new versions and the evidence gap."""

from __future__ import annotations

import hashlib

import pytest
from django.core.exceptions import PermissionDenied
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotator.disputes.services import dispute_settle
from annotator.models import (
    Candidate,
    CandidateSource,
    Dispute,
    Document,
    FinalGrade,
    FinalSource,
    GradingSet,
    Pool,
    PoolJudgment,
    PoolVersion,
    PoolVersionSource,
)
from annotator.pools.freeze import FreezeBlocked, pool_freeze
from annotator.pools.services import (
    CopyError,
    FreezeError,
    grading_set_create_from_version,
    pool_version_create,
)
from tests import factories
from tests.conftest import Cast

# The seeds' phone-number example: A3 B2 C1 D0 E0, every pair unanimous.
PHONE = {("q1", d): (g, g) for d, g in zip("ABCDE", (3, 2, 1, 0, 0), strict=True)}


def editors(cast: Cast) -> tuple:
    return (cast.editor, cast.editor2)


def test_freezing_a_settled_set_records_every_final_grade_and_its_provenance(cast: Cast) -> None:
    grading_set = factories.graded_set(cast.alpha, editors(cast), PHONE, name="Phone number change")
    Candidate.objects.filter(grading_set=grading_set, document__external_id="E").update(
        source=CandidateSource.MANUAL, source_detail="", added_by=cast.owner
    )
    version = pool_freeze(grading_set=grading_set, by=cast.reviewer)

    assert version.number == 1
    assert version.pool.name == "Phone number change"
    assert version.source == PoolVersionSource.FROZEN
    assert version.judgments_by_query() == {"q1": {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0}}
    expected = "q1\tA\t3\nq1\tB\t2\nq1\tC\t1\nq1\tD\t0\nq1\tE\t0\n"
    assert version.sha256 == hashlib.sha256(expected.encode()).hexdigest()
    assert version.counts == {"judgments": 5, "queries": 1, "by_grade": {"0": 2, "1": 1, "2": 1, "3": 1}}
    assert version.criteria_versions == [1]
    assert version.frozen_by == cast.reviewer
    assert version.exclusions == []
    assert set(version.judgments.values_list("source", flat=True)) == {FinalSource.UNANIMOUS}
    provenance = version.provenance
    assert provenance["candidates"]["pooled"] == {
        "pairs": 4,
        "details": [{"detail": "run bm25.trec, depth 10", "pairs": 4}],
    }
    assert provenance["candidates"]["manual"]["added_by"] == {"olivia": 1}
    assert provenance["final_grades"] == {"unanimous": 5}
    # Each judgment remembers the document version that was graded.
    assert all(j.document_version.version == 1 for j in version.judgments.select_related("document_version"))
    grading_set.refresh_from_db()
    assert grading_set.pool == version.pool
    assert grading_set.is_open is False


def test_an_id_stored_before_the_imports_refused_it_stops_the_freeze_with_a_message(cast: Cast) -> None:
    """Imports refuse U+2028 in IDs; a document stored before they did must not make the freeze a
    500 nor a version whose export cannot be read back."""
    grading_set = factories.graded_set(cast.alpha, editors(cast), PHONE, name="Legacy")
    Document.objects.filter(project=cast.alpha, external_id="A").update(external_id="A\u2028old")
    with pytest.raises(FreezeError, match=r"cannot be frozen: ID 'A\\u2028old' is empty, padded"):
        pool_freeze(grading_set=grading_set, by=cast.reviewer)
    assert not Pool.objects.filter(project=cast.alpha).exists()
    grading_set.refresh_from_db()
    assert grading_set.is_open and grading_set.pool is None


def test_freezing_with_an_open_dispute_is_refused_with_the_list_of_pairs(cast: Cast) -> None:
    grades = {**PHONE, ("q1", "B"): (2, 3), ("q1", "F"): (1, None)}
    grading_set = factories.graded_set(cast.alpha, editors(cast), grades)

    with pytest.raises(FreezeBlocked) as refused:
        pool_freeze(grading_set=grading_set, by=cast.reviewer)

    listed = [(b.query_id, b.doc_id, b.why) for b in refused.value.blockers]
    assert listed == [("q1", "B", "open_dispute"), ("q1", "F", "no_final_grade")]
    message = str(refused.value)
    assert "(q1, B): open dispute (Waiting for every editor's reason)" in message
    assert "(q1, F): no final grade (1 of 2 grades)" in message
    assert not Pool.objects.filter(project=cast.alpha).exists()


def test_unsettled_pairs_can_be_left_out_only_with_a_reason_that_is_recorded(cast: Cast) -> None:
    grades = {**PHONE, ("q1", "B"): (2, 3)}
    grading_set = factories.graded_set(cast.alpha, editors(cast), grades)
    with pytest.raises(FreezeError, match="needs a reason"):
        pool_freeze(grading_set=grading_set, by=cast.reviewer, exclude_unsettled=True, reason="  ")

    version = pool_freeze(
        grading_set=grading_set, by=cast.reviewer, exclude_unsettled=True, reason="B is ambiguous"
    )

    assert version.judgments_by_query() == {"q1": {"A": 3, "C": 1, "D": 0, "E": 0}}
    assert version.exclusions == [
        {
            "query_id": "q1",
            "doc_id": "B",
            "why": "open_dispute",
            "values": {"status": "awaiting_reasons"},
            "detail": "open dispute (Waiting for every editor's reason)",
            "reason": "B is ambiguous",
        }
    ]
    assert version.provenance["excluded_pairs"] == 1
    # Where the frozen pairs came from adds up to the judgments: the left-out pair is not among them.
    assert sum(entry["pairs"] for entry in version.provenance["candidates"].values()) == 4
    # The stored code and values let the version page say why in its reader's language.
    with translation.override("zh-hans"):
        detail = version.exclusion_rows[0]["detail"]
    assert detail != version.exclusions[0]["detail"] and "Waiting" not in detail
    # A version frozen before the values were kept shows the sentence it stored.
    old = {
        "query_id": "q1",
        "doc_id": "B",
        "why": "no_final_grade",
        "detail": "no final grade (1 of 2 grades)",
        "reason": "r",
    }
    with translation.override("zh-hans"):
        assert PoolVersion(exclusions=[old]).exclusion_rows == [old]


def test_a_settled_dispute_freezes_with_the_reviewers_grade_and_source(cast: Cast) -> None:
    grading_set = factories.graded_set(cast.alpha, editors(cast), {**PHONE, ("q1", "B"): (2, 3)})
    dispute = Dispute.objects.get(candidate__document__external_id="B")
    dispute.status = "in_review"
    dispute.save()
    dispute_settle(dispute=dispute, by=cast.reviewer, grade=2, note="deadline missing")

    version = pool_freeze(grading_set=grading_set, by=cast.owner)

    assert version.judgments.get(doc_id="B").source == FinalSource.ADJUDICATED
    assert version.provenance["final_grades"] == {"adjudicated": 1, "unanimous": 4}


def test_editors_cannot_freeze(cast: Cast) -> None:
    grading_set = factories.graded_set(cast.alpha, editors(cast), PHONE)
    with pytest.raises(PermissionDenied):
        pool_freeze(grading_set=grading_set, by=cast.editor)
    with pytest.raises(PermissionDenied):
        pool_freeze(grading_set=grading_set, by=cast.outsider)
    assert not Pool.objects.exists()


def test_a_set_is_frozen_once(cast: Cast) -> None:
    grading_set = factories.graded_set(cast.alpha, editors(cast), PHONE)
    pool_freeze(grading_set=grading_set, by=cast.reviewer)
    with pytest.raises(FreezeError, match="already frozen as .* version 1"):
        pool_freeze(grading_set=grading_set, by=cast.owner)


def test_a_set_with_no_final_grade_has_nothing_to_freeze(cast: Cast) -> None:
    grading_set = GradingSet.objects.create(project=cast.alpha, name="Empty")
    with pytest.raises(FreezeError, match="nothing to freeze"):
        pool_freeze(grading_set=grading_set, by=cast.reviewer)


def test_a_new_version_starts_from_a_frozen_one_and_freezes_as_the_next_number(cast: Cast) -> None:
    v1 = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE, name="Phone"), by=cast.reviewer
    )

    next_set = grading_set_create_from_version(version=v1, by=cast.reviewer)

    assert next_set.name == "Phone v2"
    assert next_set.pool == v1.pool and next_set.based_on == v1 and next_set.is_open
    copied = Candidate.objects.filter(grading_set=next_set)
    assert {c.source for c in copied} == {CandidateSource.COPIED}
    assert {(c.document.external_id, c.final_grade.grade, c.final_grade.source) for c in copied} == {
        ("A", 3, "unanimous"),
        ("B", 2, "unanimous"),
        ("C", 1, "unanimous"),
        ("D", 0, "unanimous"),
        ("E", 0, "unanimous"),
    }
    # Extend it: one new document, graded; one copied grade revised by a reviewer.
    new_doc = factories.document(cast.alpha, "F")
    added = Candidate.objects.create(
        grading_set=next_set, query=copied[0].query, document=new_doc, source=CandidateSource.MANUAL
    )
    factories.grade_pair(added, editors(cast), (2, 2))
    FinalGrade.objects.filter(candidate__grading_set=next_set, candidate__document__external_id="D").update(
        grade=1, source=FinalSource.ADJUDICATED
    )

    v2 = pool_freeze(grading_set=next_set, by=cast.reviewer)

    assert (v2.pool, v2.number) == (v1.pool, 2)
    assert v2.judgments_by_query() == {"q1": {"A": 3, "B": 2, "C": 1, "D": 1, "E": 0, "F": 2}}
    assert v2.provenance["based_on"] == {"pool": "Phone", "version": 1, "sha256": v1.sha256}
    # Unchanged copies keep their source and the document version graded for version 1.
    a = v2.judgments.get(doc_id="A")
    assert (
        a.source == "unanimous" and a.document_version_id == v1.judgments.get(doc_id="A").document_version_id
    )
    diff = v1.diff(v2)
    assert [(r.kind, r.doc_id, r.old_grade, r.new_grade) for r in diff.rows] == [
        ("changed", "D", 0, 1),
        ("added", "F", None, 2),
    ]
    assert v1.judgments_by_query() == {"q1": {"A": 3, "B": 2, "C": 1, "D": 0, "E": 0}}  # untouched


def test_versions_form_a_line_only_the_newest_is_continued_by_one_set_at_a_time(cast: Cast) -> None:
    """Two sets started from version 1 must not freeze as 2 and 3, 3 silently dropping 2's changes."""
    v1 = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE, name="Phone"), by=cast.reviewer
    )
    first = grading_set_create_from_version(version=v1, by=cast.reviewer)
    with pytest.raises(CopyError, match="“Phone v2” already continues Phone from version 1"):
        grading_set_create_from_version(version=v1, by=cast.reviewer, name="Second branch")
    # A set that started from version 1 before another froze cannot freeze on top of it.
    stale = GradingSet.objects.create(project=cast.alpha, name="Stale branch", pool=v1.pool, based_on=v1)
    v2 = pool_freeze(grading_set=first, by=cast.reviewer)
    FinalGrade.objects.bulk_create(
        FinalGrade(
            candidate=Candidate.objects.create(
                grading_set=stale, query=c.query, document=c.document, source=CandidateSource.COPIED
            ),
            grade=c.final_grade.grade,
            source=c.final_grade.source,
            criteria_version=c.final_grade.criteria_version,
        )
        for c in Candidate.objects.filter(grading_set=first).select_related("final_grade")
    )
    with pytest.raises(
        FreezeError, match="started from version 1 of Phone, but version 2 has been added since"
    ):
        pool_freeze(grading_set=stale, by=cast.reviewer)
    assert list(v1.pool.versions.values_list("number", flat=True).order_by("number")) == [1, 2]
    # Only the newest version can be continued.
    with pytest.raises(CopyError, match="Version 1 is not the newest version of Phone: start from version 2"):
        grading_set_create_from_version(version=v1, by=cast.reviewer)
    assert grading_set_create_from_version(version=v2, by=cast.reviewer).based_on == v2


def test_a_new_version_keeps_who_settled_each_pair_and_the_timeline_says_it_was_copied(
    cast: Cast, client: Client
) -> None:
    """The copy keeps the reviewer and the note (no "settled it" without a subject), and "Copied
    from ... ." is said in the reader's language, not stored in the language of whoever clicked."""
    from annotator.disputes.timeline import pair_timeline
    from annotator.models import Membership

    grading_set = factories.graded_set(
        cast.alpha, editors(cast), {**PHONE, ("q1", "B"): (2, 3)}, name="Phone"
    )
    dispute = Dispute.objects.get(candidate__document__external_id="B")
    dispute.status = "in_review"
    dispute.save()
    dispute_settle(dispute=dispute, by=cast.reviewer, grade=2, note="deadline missing")
    v1 = pool_freeze(grading_set=grading_set, by=cast.reviewer)
    with translation.override("zh-hans"):
        next_set = grading_set_create_from_version(version=v1, by=cast.owner)
    copied = {
        f.candidate.document.external_id: f
        for f in FinalGrade.objects.filter(candidate__grading_set=next_set).select_related(
            "candidate__document"
        )
    }
    assert (copied["B"].decided_by, copied["B"].note, copied["B"].source) == (
        cast.reviewer,
        "deadline missing",
        "adjudicated",
    )
    assert (copied["A"].decided_by, copied["A"].note, copied["A"].source) == (None, "", "unanimous")
    membership = Membership.objects.get(project=cast.alpha, user=cast.reviewer)
    for document, expected in (
        ("B", ("adjudicated", "Phone v1", "deadline missing")),
        ("A", ("unanimous", "Phone v1", "")),
    ):
        candidate = copied[document].candidate
        (decided,) = [
            e
            for e in pair_timeline(candidate=candidate, viewer=cast.reviewer, membership=membership).events
            if e.kind == "decided"
        ]
        assert (decided.copied_source, decided.copied_from, decided.text) == expected
    client.force_login(cast.reviewer)
    timeline = reverse(
        "pair_timeline", kwargs={"slug": cast.alpha.slug, "candidate_id": copied["B"].candidate_id}
    )
    page = client.get(timeline).content.decode()
    assert f"Final grade 2, copied from Phone v1, where {cast.reviewer.get_username()} settled it." in page
    assert "deadline missing" in page and "Copied from" not in page


def test_copying_an_imported_version_keeps_imported_as_the_source_of_unchanged_pairs(cast: Cast) -> None:
    for d in "AB":
        factories.document(cast.alpha, d)
    factories.query(cast.alpha, "q1")
    pool = Pool.objects.create(project=cast.alpha, name="Imported")
    v1 = pool_version_create(
        pool=pool,
        judgments=[("q1", "A", 3, "imported"), ("q1", "B", 0, "imported")],
        source=PoolVersionSource.IMPORTED,
        by=cast.owner,
    )
    next_set = grading_set_create_from_version(version=v1, by=cast.owner)
    assert (
        FinalGrade.objects.filter(candidate__grading_set=next_set, source=FinalSource.ADJUDICATED).count()
        == 2
    )

    v2 = pool_freeze(grading_set=next_set, by=cast.owner)

    assert set(v2.judgments.values_list("source", flat=True)) == {"imported"}
    assert v2.sha256 == v1.sha256  # same judgments, same hash
    # The version's own record says "imported", not "settled by a reviewer 2", and claims no
    # criteria for grades judged under none of the project's.
    assert v2.provenance["final_grades"] == {"imported": 2}
    assert v2.criteria_versions == []


def test_the_version_page_says_which_judgments_cannot_be_checked_for_an_evidence_gap(
    cast: Cast, client: Client
) -> None:
    factories.document(cast.alpha, "A")
    factories.query(cast.alpha, "q1")
    pool = Pool.objects.create(project=cast.alpha, name="Imported")
    v1 = pool_version_create(
        pool=pool, judgments=[("q1", "A", 3, "imported")], source=PoolVersionSource.IMPORTED, by=cast.owner
    )
    client.force_login(cast.owner)
    page = client.get(
        reverse("pool_version_detail", kwargs={"slug": "alpha", "pool_id": pool.pk, "version_id": v1.pk})
    )
    assert "1 judgment records no document version (imported from a file" in page.content.decode()
    frozen = pool_freeze(grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE), by=cast.reviewer)
    page = client.get(
        reverse(
            "pool_version_detail",
            kwargs={"slug": "alpha", "pool_id": frozen.pool_id, "version_id": frozen.pk},
        )
    )
    assert "records no document version" not in page.content.decode()


def test_a_version_whose_ids_are_not_in_the_project_cannot_be_copied(cast: Cast) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Foreign")
    v1 = pool_version_create(
        pool=pool, judgments=[("301", "FT-1", 1, "imported")], source="imported", by=cast.owner
    )
    with pytest.raises(CopyError, match="queries 301 and documents FT-1"):
        grading_set_create_from_version(version=v1, by=cast.owner)
    assert not GradingSet.objects.filter(project=cast.alpha).exists()


def test_editors_cannot_start_a_new_version(cast: Cast) -> None:
    v1 = pool_freeze(grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE), by=cast.reviewer)
    with pytest.raises(PermissionDenied):
        grading_set_create_from_version(version=v1, by=cast.editor)


def test_a_document_changed_after_freezing_shows_as_an_evidence_gap_without_touching_the_pool(
    cast: Cast,
) -> None:
    version = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE), by=cast.reviewer
    )
    before = (version.sha256, version.canonical)
    assert version.evidence_gap().count() == 0

    Document.upsert(
        project=cast.alpha, external_id="C", title="Document C", body="Rewritten: now with the deadline."
    )

    gap = list(version.evidence_gap())
    assert [(j.doc_id, j.document_version.version, j.document_version.document.version) for j in gap] == [
        ("C", 1, 2)
    ]
    version.refresh_from_db()
    assert (version.sha256, version.canonical) == before


def test_a_copied_pair_can_be_removed_and_added_again_to_be_graded_anew(cast: Cast) -> None:
    """After its document changed, a copied pair can be removed and added again, to grade the new
    content in a new version as the version page says."""
    from annotator.grading.services import candidate_remove, candidates_add_by_hand, grade_submit

    v1 = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE, name="Phone"), by=cast.reviewer
    )
    next_set = grading_set_create_from_version(version=v1, by=cast.reviewer)
    copied = Candidate.objects.select_related("query", "document").get(
        grading_set=next_set, document__external_id="B"
    )
    candidate_remove(candidate=copied)
    assert not Candidate.objects.filter(pk=copied.pk).exists()
    assert not FinalGrade.objects.filter(candidate_id=copied.pk).exists()
    assert v1.judgments.get(doc_id="B").grade == 2  # the frozen version keeps its judgment
    added = candidates_add_by_hand(
        grading_set=next_set, query=copied.query, documents=[copied.document], by=cast.owner
    )
    assert added.added == 1
    fresh = Candidate.objects.get(grading_set=next_set, document__external_id="B")
    assert fresh.source == CandidateSource.MANUAL and not FinalGrade.objects.filter(candidate=fresh).exists()
    for editor in editors(cast):
        grade_submit(candidate=fresh, editor=editor, value=1)
    v2 = pool_freeze(grading_set=next_set, by=cast.reviewer)
    assert v2.judgments.get(doc_id="B").grade == 1 and v2.judgments.count() == 5
    # A copied pair that was removed and not added again is simply not in the next version.
    v3_set = grading_set_create_from_version(version=v2, by=cast.reviewer)
    candidate_remove(candidate=Candidate.objects.get(grading_set=v3_set, document__external_id="E"))
    v3 = pool_freeze(grading_set=v3_set, by=cast.reviewer)
    assert sorted(v3.judgments.values_list("doc_id", flat=True)) == ["A", "B", "C", "D"]


def test_a_pair_waiting_for_a_re_check_says_so_among_the_blockers(cast: Cast) -> None:
    """Not only "no final grade (2 of 2 grades)": what is missing is said."""
    from annotator.documents.readers import DocumentRecord
    from annotator.documents.services import documents_import
    from annotator.pools.freeze import freeze_preview
    from tests.factories import grade, make_pair

    pair = make_pair(cast.alpha)
    grade(pair, cast.editor, 2)
    documents_import(project=cast.alpha, records=[DocumentRecord(line=1, external_id="B", body="Changed.")])
    grade(pair, cast.editor2, 2)  # on the new text: the first grade still waits for its re-check
    (blocker,) = freeze_preview(pair.grading_set).blockers
    assert blocker.detail == "no final grade (2 of 2 grades; 1 waits for its editor's re-check)"


def test_freezing_reads_the_pairs_in_a_fixed_number_of_queries_without_their_texts(cast: Cast) -> None:
    """An IN list of every pair hits "too many SQL variables" on SQLite, and loading documents
    reads every body: the pairs are rows of one query, as many queries for 40 pairs as for 4, and
    no body read."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotator.pools.freeze import freeze_preview

    counts = []
    for n, name in ((4, "Small"), (40, "Large")):
        grades = {(f"q{i % 3}", f"{name}-{i}"): ((i % 4, i % 4) if i % 5 else (1, None)) for i in range(n)}
        grading_set = factories.graded_set(cast.alpha, editors(cast), grades, name=name)
        with CaptureQueriesContext(connection) as captured:
            preview = freeze_preview(grading_set)
        assert len(preview.candidates) == n
        assert len(preview.blockers) == len([i for i in range(n) if not i % 5])
        assert all('"body"' not in q["sql"] and '"text"' not in q["sql"] for q in captured.captured_queries)
        counts.append(len(captured))
    assert counts[0] == counts[1]


# ---- Copied pairs whose text or criteria changed: a reviewer re-checks them ---------------------


def _copy_of_phone(cast: Cast) -> tuple[PoolVersion, GradingSet]:
    v1 = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE, name="Phone"), by=cast.reviewer
    )
    return v1, grading_set_create_from_version(version=v1, by=cast.reviewer)


def _copied(next_set: GradingSet, doc: str) -> Candidate:
    return Candidate.objects.select_related("query", "document").get(
        grading_set=next_set, document__external_id=doc
    )


def test_a_copied_pair_whose_document_changes_waits_for_a_reviewers_re_check(
    cast: Cast, client: Client
) -> None:
    """A copied pair has no grade in its new set to carry the flag: its final grade carries it, the
    pair joins the reviewers' re-check list, and a re-check clears it."""
    from annotator.disputes.rechecks import final_grade_recheck, recheck_token
    from annotator.documents.readers import DocumentRecord
    from annotator.documents.services import documents_import

    _v1, next_set = _copy_of_phone(cast)
    assert not Candidate.objects.final_to_recheck().exists()
    documents_import(
        project=cast.alpha, records=[DocumentRecord(line=1, external_id="C", body="Now with the deadline.")]
    )
    c = _copied(next_set, "C")
    assert FinalGrade.objects.get(candidate=c).stale_reason == "document"
    assert list(Candidate.objects.final_to_recheck()) == [c]

    client.force_login(cast.reviewer)
    freeze_page = client.get(
        reverse("pool_freeze", kwargs={"slug": "alpha", "set_id": next_set.pk})
    ).content.decode()
    assert (
        "Pairs with a grade marked for re-checking (the document, the query or the criteria changed since): "
        "1." in freeze_page
    )
    page = client.get(
        reverse("final_recheck", kwargs={"slug": "alpha", "candidate_id": c.pk})
    ).content.decode()
    assert "Copied from Phone version 1: no editor graded this pair in this set." in page
    assert "Where the final grade came from" in page and "The editors&#x27; grades" not in page
    assert "decided on document version 1" in page and "The document as graded (version 1)" in page
    assert "The document changed since this grade was given." in page

    final_grade_recheck(candidate=c, by=cast.reviewer, grade=1, seen=recheck_token(c))
    assert FinalGrade.objects.get(candidate=c).stale_reason == ""
    assert not Candidate.objects.final_to_recheck().exists()
    v2 = pool_freeze(grading_set=next_set, by=cast.reviewer)
    assert v2.judgments.get(doc_id="C").document_version.version == 2  # what the reviewer read
    assert not v2.evidence_gap().exists()


def test_a_document_changed_before_the_copy_is_marked_when_the_copy_is_made(cast: Cast) -> None:
    v1 = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE, name="Phone"), by=cast.reviewer
    )
    Document.upsert(
        project=cast.alpha, external_id="C", title="Document C", body="Rewritten: now with the deadline."
    )
    assert [j.doc_id for j in v1.evidence_gap()] == ["C"]
    next_set = grading_set_create_from_version(version=v1, by=cast.reviewer)
    marked = dict(
        FinalGrade.objects.filter(candidate__grading_set=next_set).values_list(
            "candidate__document__external_id", "stale_reason"
        )
    )
    assert marked == {"A": "", "B": "", "C": "document", "D": "", "E": ""}


def test_copies_decided_under_criteria_a_meaning_change_replaced_wait_for_a_re_check(cast: Cast) -> None:
    """Grades made under criteria v1, copied after v3 (meaning-changing) was published, wait for a
    re-check rather than freeze again without a word. Wording-only changes leave them alone."""
    from annotator.documents.services import criteria_publish

    levels = {3: "Complete.", 2: "Partial.", 1: "Related.", 0: "Unrelated."}
    _v1, next_set = _copy_of_phone(cast)
    criteria_publish(project=cast.alpha, levels=levels, change="wording", note="typo", by=cast.owner)
    assert not Candidate.objects.final_to_recheck().exists()
    _, flagged = criteria_publish(
        project=cast.alpha,
        levels={**levels, 3: "Complete, with the deadline."},
        change="meaning",
        note="deadline",
        by=cast.owner,
    )
    assert flagged == 5
    assert set(
        FinalGrade.objects.filter(candidate__grading_set=next_set).values_list("stale_reason", flat=True)
    ) == {"criteria"}
    assert Candidate.objects.final_to_recheck().count() == 5


def test_a_copy_made_after_a_meaning_change_of_the_criteria_is_marked_at_once(cast: Cast) -> None:
    from annotator.documents.services import criteria_publish

    v1 = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE, name="Phone"), by=cast.reviewer
    )
    levels = {3: "Complete, with the deadline.", 2: "Partial.", 1: "Related.", 0: "Unrelated."}
    criteria_publish(project=cast.alpha, levels=levels, change="meaning", note="deadline", by=cast.owner)
    copy = grading_set_create_from_version(version=v1, by=cast.reviewer)
    assert set(
        FinalGrade.objects.filter(candidate__grading_set=copy).values_list("stale_reason", flat=True)
    ) == {"criteria"}


# ---- Versions of large sets: the version page and the provenance stay bounded ------------------


def test_a_large_set_freezes_with_a_bounded_provenance_and_a_version_page_a_page_at_a_time(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version with thousands of left-out pairs and a provenance of one entry per pair of an
    imported file keeps its page small: the left-out pairs are paged, the provenance bounded."""
    from annotator.pools import freeze as pools_freeze
    from annotator.pools.views import PAGE_SIZE, SHOWN_DETAILS

    monkeypatch.setattr(pools_freeze, "PROVENANCE_DETAILS", 20)
    n = 130
    grades = {("q1", f"D{i:03}"): ((2, 2) if i % 2 else (1, None)) for i in range(n)}  # odd: ready
    grading_set = factories.graded_set(cast.alpha, editors(cast), grades, name="Big")
    # Imported pairs carry "file:line"; pooled ones a list of runs and ranks, one per pair here.
    for i, candidate in enumerate(Candidate.objects.filter(grading_set=grading_set).order_by("pk")):
        if i < 40:
            candidate.source, candidate.source_detail = CandidateSource.IMPORTED, f"pairs{i % 2}.csv:{i + 2}"
        else:
            candidate.source_detail = f"bm25 #{i}, dense #{n - i} (k=100)"
        candidate.save()
    version = pool_freeze(grading_set=grading_set, by=cast.reviewer, exclude_unsettled=True, reason="later")
    ready = n // 2
    imported = version.provenance["candidates"]["imported"]
    assert imported == {"pairs": 20, "details": [{"detail": "pairs1.csv", "pairs": 20}]}  # odd i: pairs1.csv
    pooled = version.provenance["candidates"]["pooled"]
    assert pooled["pairs"] == ready - 20
    # The 20 most frequent details (all equal here: then by name, numbers as numbers), and one
    # entry summing the rest.
    assert len(pooled["details"]) == 21
    assert [d["detail"].split(",")[0] for d in pooled["details"][:3]] == ["bm25 #41", "bm25 #43", "bm25 #45"]
    assert pooled["details"][-1] == {"detail": "", "pairs": ready - 20 - 20, "other_details": ready - 20 - 20}
    # Every pair still counted once: the details add up to the source's pairs.
    for info in version.provenance["candidates"].values():
        assert sum(d["pairs"] for d in info["details"]) == info["pairs"]

    client.force_login(cast.reviewer)
    url = reverse(
        "pool_version_detail", kwargs={"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk}
    )
    page = client.get(url).content.decode()
    left_out = n - ready
    assert f"Pairs left out when freezing: {left_out}" in page
    assert page.count('<td class="user-text">later</td>') == PAGE_SIZE
    last = client.get(f"{url}?left_out_page=2").content.decode()
    assert last.count('<td class="user-text">later</td>') == left_out - PAGE_SIZE
    # The provenance table names the first details and counts the rest.
    more = ready - 20 - SHOWN_DETAILS
    assert f"and {more} more details ({more})" in page
    assert "Recorded provenance (JSON)" in page  # short enough to print here


def test_a_long_recorded_provenance_is_left_to_the_manifest(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from annotator.pools import views as pool_views

    version = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE), by=cast.reviewer
    )
    monkeypatch.setattr(pool_views, "PROVENANCE_SHOWN_CHARS", 10)
    client.force_login(cast.reviewer)
    url = reverse(
        "pool_version_detail", kwargs={"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk}
    )
    page = client.get(url).content.decode()
    assert "Recorded provenance (JSON)" not in page
    assert "is too long to show here: it is whole in manifest.json" in page


# --- queries keep no versions: a fingerprint per judgment stands in for one ------------------------


def change_query(cast: Cast, text: str = "How do I change my phone number after registering?") -> None:
    from annotator.documents.readers import QueryRecord
    from annotator.documents.services import queries_import

    queries_import(project=cast.alpha, records=[QueryRecord(line=1, external_id="q1", text=text)])


def test_a_query_changed_after_freezing_shows_as_a_gap_and_its_copies_wait_for_a_re_check(
    cast: Cast, client: Client
) -> None:
    """A query's new text leaves a trace on the version, and a new version started from it flags
    grades made on the old text, as for a changed document."""
    from annotator.models import Query

    version = pool_freeze(
        grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE), by=cast.reviewer
    )
    fingerprint = Query.objects.get(project=cast.alpha, external_id="q1").fingerprint
    assert set(version.judgments.values_list("query_fingerprint", flat=True)) == {fingerprint}
    assert version.query_gap() == []
    change_query(cast)
    assert version.query_gap() == ["q1"]
    client.force_login(cast.reviewer)
    html = client.get(
        reverse(
            "pool_version_detail",
            kwargs={"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk},
        )
    ).content.decode()
    assert (
        "Evidence gap: 1 query changed (its text or information need) since its judgments were decided:"
        in html
    )
    copy = grading_set_create_from_version(version=version, by=cast.reviewer)
    assert sorted(
        Candidate.objects.filter(grading_set=copy)
        .final_to_recheck()
        .values_list("document__external_id", flat=True)
    ) == list("ABCDE")
    assert set(
        FinalGrade.objects.filter(candidate__grading_set=copy).values_list("stale_reason", flat=True)
    ) == {"query"}


def test_a_pair_frozen_while_marked_for_its_query_records_an_earlier_text_and_its_copies_are_marked(
    cast: Cast, client: Client
) -> None:
    grading_set = factories.graded_set(cast.alpha, editors(cast), PHONE)
    change_query(cast)  # the settled pairs' grades are marked: a reviewer did not re-check them
    version = pool_freeze(grading_set=grading_set, by=cast.reviewer)
    assert set(version.judgments.values_list("query_fingerprint", flat=True)) == {
        PoolJudgment.EARLIER_QUERY_TEXT
    }
    assert version.provenance["stale_pairs"] == 5
    assert version.query_gap() == ["q1"]
    client.force_login(cast.reviewer)
    html = client.get(
        reverse(
            "pool_version_detail",
            kwargs={"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk},
        )
    ).content.decode()
    assert "5 pairs were frozen while marked for re-checking" in html
    assert (
        "Evidence gap: 1 query changed (its text or information need) since its judgments were decided: q1."
        in html
    )
    assert "record no fingerprint" not in html
    copy = grading_set_create_from_version(version=version, by=cast.reviewer)
    assert set(
        FinalGrade.objects.filter(candidate__grading_set=copy).values_list("stale_reason", flat=True)
    ) == {"query"}


def test_an_imported_version_records_no_fingerprint_and_says_so(cast: Cast, client: Client) -> None:
    from annotator.pools.files import pool_import

    factories.graded_set(cast.alpha, editors(cast), PHONE)  # the project's queries and documents
    version = pool_import(
        project=cast.alpha,
        by=cast.owner,
        data=b"q1 0 A 3\nq1 0 B 1\n",
        file_name="q.txt",
        fmt="qrels",
        pool_name="Imported",
    )
    assert set(version.judgments.values_list("query_fingerprint", flat=True)) == {""}
    change_query(cast)
    assert version.query_gap() == []  # not known, so not claimed
    client.force_login(cast.reviewer)
    html = client.get(
        reverse(
            "pool_version_detail",
            kwargs={"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk},
        )
    ).content.decode()
    assert "2 judgments record no fingerprint of their query's text" in html


def test_a_copy_keeps_its_versions_fingerprint_until_a_reviewer_re_checks_it(cast: Cast) -> None:
    """Pairs frozen while marked for their query keep the mark: the next version's copies are
    marked again, since their grades still stand on the first text."""
    from annotator.disputes.rechecks import final_grade_recheck, recheck_token
    from annotator.models import Query

    v1 = pool_freeze(grading_set=factories.graded_set(cast.alpha, editors(cast), PHONE), by=cast.reviewer)
    old = Query.objects.get(project=cast.alpha, external_id="q1").fingerprint
    change_query(cast)
    copy = grading_set_create_from_version(version=v1, by=cast.reviewer)
    a = Candidate.objects.get(grading_set=copy, document__external_id="A")
    final_grade_recheck(candidate=a, by=cast.owner, grade=3, note="", seen=recheck_token(a))
    new = Query.objects.get(project=cast.alpha, external_id="q1").fingerprint
    # The others stay marked; leave them in with their marks.
    v2 = pool_freeze(grading_set=copy, by=cast.reviewer)
    recorded = dict(v2.judgments.values_list("doc_id", "query_fingerprint"))
    assert old != new and recorded == {"A": new, "B": old, "C": old, "D": old, "E": old}
    assert v2.provenance["stale_pairs"] == 4 and v2.query_gap() == ["q1"]
    v3 = grading_set_create_from_version(version=v2, by=cast.reviewer)
    marked = dict(
        FinalGrade.objects.filter(candidate__grading_set=v3).values_list(
            "candidate__document__external_id", "stale_reason"
        )
    )
    assert marked == {"A": "", "B": "query", "C": "query", "D": "query", "E": "query"}


def test_a_freeze_in_a_job_reports_the_judgments_written_of_those_ready(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    from annotator.pools import services

    class Reports:
        def __init__(self) -> None:
            self.seen: list[tuple[str, int, int | None]] = []
            self.stage_name = ""

        def stage(self, name: str, total: int | None = None) -> None:
            self.stage_name = name
            self.seen.append((name, 0, total))

        def report(self, done: int, total: int | None = None) -> None:
            self.seen.append((self.stage_name, done, total))

    monkeypatch.setattr(services, "ROWS_REPORTED", 2)
    grading_set = factories.graded_set(cast.alpha, editors(cast), PHONE)
    progress = Reports()
    pool_freeze(grading_set=grading_set, by=cast.reviewer, progress=progress)  # type: ignore[arg-type]
    assert progress.seen[0] == ("saving", 0, 5)
    done = [d for _stage, d, _total in progress.seen[1:]]
    # On PostgreSQL every ROWS_REPORTED rows of the COPY; on SQLite after each batch of INSERTs
    # (5,000 rows) that crosses a multiple of it.
    assert done == ([2, 4, 5] if connection.vendor == "postgresql" else [5])
