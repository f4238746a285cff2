"""A reviewer re-checks a settled pair whose grades went stale (final_grade_recheck and its pages).

Its editors cannot re-grade a settled pair, so without it a changed document, query or criteria
would leave the pair flagged for good: the editor's "to re-check" row could never clear.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotator.disputes.rechecks import (
    AlreadyRechecked,
    PairChangedSinceShown,
    final_grade_recheck,
    recheck_token,
)
from annotator.disputes.services import DisputeError, dispute_settle
from annotator.disputes.timeline import pair_timeline
from annotator.documents.readers import DocumentRecord, QueryRecord
from annotator.documents.services import criteria_publish, documents_import, queries_import
from annotator.models import (
    Candidate,
    CriteriaChange,
    CriteriaVersion,
    FinalGrade,
    FinalGradeRecheck,
    FinalSource,
    Grade,
    GradeHistory,
    PoolJudgment,
)
from annotator.pools.freeze import pool_freeze
from tests.conftest import Cast
from tests.factories import grade, in_review, make_pair

NEW_BODY = "How to request a change after submitting: Settings, then Contact, within 7 days."


def url(name: str, **kwargs: int) -> str:
    return reverse(name, kwargs={"slug": "alpha", **kwargs})


def settled(cast: Cast, grades: tuple[int, int] = (2, 2), document: str = "B") -> Candidate:
    candidate = make_pair(cast.alpha, document=document)
    grade(candidate, cast.editor, grades[0], reason="Ed read v1")
    grade(candidate, cast.editor2, grades[1], reason="Eve read v1")
    assert FinalGrade.objects.filter(candidate=candidate).exists()
    return candidate


def change_document(candidate: Candidate, body: str = NEW_BODY) -> None:
    documents_import(
        project=candidate.grading_set.project,
        records=[DocumentRecord(line=1, external_id=candidate.document.external_id, body=body)],
    )
    candidate.document.refresh_from_db()


def recheck(candidate: Candidate, by: object, grade_: int, note: str = "") -> FinalGradeRecheck:
    return final_grade_recheck(
        candidate=candidate, by=by, grade=grade_, note=note, seen=recheck_token(candidate)
    )  # type: ignore[arg-type]


# --- the service ------------------------------------------------------------------------------------


def test_a_changed_document_puts_a_settled_pair_on_the_reviewers_list_not_the_editors(cast: Cast) -> None:
    candidate = settled(cast)
    assert not Candidate.objects.final_to_recheck().exists()
    change_document(candidate)
    assert list(Candidate.objects.final_to_recheck()) == [candidate]
    # The editor cannot act on it: it is not counted as theirs to re-check.
    assert not Grade.objects.filter(editor=cast.editor).to_recheck().exists()
    assert Grade.objects.filter(candidate=candidate, stale=True).count() == 2


def test_the_list_holds_pairs_with_a_stale_grade_or_a_stale_final_grade_once_each(cast: Cast) -> None:
    """An EXISTS per settled pair is slow at hundreds of thousands of pairs: the count reads the
    few marked rows through two partial indexes."""
    from django.db import connection

    by_grade, by_final, both, fresh = (settled(cast, document=d) for d in "BCDE")
    Grade.objects.filter(candidate__in=[by_grade, both]).update(stale=True, stale_reason="document")
    FinalGrade.objects.filter(candidate__in=[by_final, both]).update(stale_reason="query")
    listed = Candidate.objects.final_to_recheck()
    assert sorted(c.pk for c in listed) == sorted(c.pk for c in (by_grade, by_final, both))
    assert listed.count() == 3 and fresh not in listed
    assert "EXISTS" not in str(listed.query)
    if connection.vendor == "sqlite":
        plan = listed.order_by().explain()
        assert "grade_stale_candidate" in plan and "final_grade_stale_candidate" in plan


def test_keeping_the_final_grade_clears_the_flags_and_keeps_its_provenance(cast: Cast) -> None:
    candidate = settled(cast)
    v1 = candidate.document.current_version
    change_document(candidate)
    before = FinalGrade.objects.get(candidate=candidate)

    record = recheck(candidate, cast.reviewer, 2, note="Still complete.")

    final = FinalGrade.objects.get(candidate=candidate)
    assert (final.grade, final.source, final.decided_by, final.note) == (2, FinalSource.UNANIMOUS, None, "")
    assert final.decided_at == before.decided_at
    assert (record.old_grade, record.new_grade, record.old_source, record.note) == (
        2,
        2,
        FinalSource.UNANIMOUS,
        "Still complete.",
    )
    assert record.reasons == "document" and record.document_version.version == 2
    assert not record.changed_grade
    # The raw grades are untouched but for the flag: they stay on the version their editors read.
    grades = list(Grade.objects.filter(candidate=candidate))
    assert [(g.stale, g.grade, g.document_version_id) for g in grades] == [(False, 2, v1.pk)] * 2
    assert (
        not GradeHistory.objects.filter(candidate=candidate).exclude(kind=GradeHistory.Kind.CREATED).exists()
    )
    assert not Candidate.objects.final_to_recheck().exists()


def test_changing_the_final_grade_needs_a_note_and_makes_it_the_reviewers(cast: Cast) -> None:
    candidate = settled(cast)
    change_document(candidate)
    with pytest.raises(DisputeError, match="from 2 to 1 needs a note"):
        recheck(candidate, cast.reviewer, 1, note="  ")
    assert not FinalGradeRecheck.objects.exists()
    assert Grade.objects.filter(candidate=candidate, stale=True).count() == 2  # nothing half-done

    record = recheck(candidate, cast.reviewer, 1, note="The new text drops the deadline.")

    final = FinalGrade.objects.get(candidate=candidate)
    assert (final.grade, final.source, final.decided_by, final.note) == (
        1,
        FinalSource.ADJUDICATED,
        cast.reviewer,
        "The new text drops the deadline.",
    )
    assert final.decided_at == record.created_at
    assert (record.old_grade, record.new_grade, record.old_source, record.old_decided_by) == (
        2,
        1,
        FinalSource.UNANIMOUS,
        None,
    )


def test_a_meaning_change_of_the_criteria_moves_the_final_grade_to_the_new_criteria(cast: Cast) -> None:
    candidate = settled(cast)
    old = FinalGrade.objects.get(candidate=candidate).criteria_version
    levels = {3: "All of it.", 2: "Most of it.", 1: "A little.", 0: "Nothing."}
    newer, flagged = criteria_publish(
        project=cast.alpha, levels=levels, change=CriteriaChange.MEANING, note="Stricter.", by=cast.owner
    )
    assert flagged == 2 and newer.number > old.number
    record = recheck(candidate, cast.reviewer, 2)
    assert record.reasons == "criteria" and record.old_criteria_version == old
    assert FinalGrade.objects.get(candidate=candidate).criteria_version == newer == record.criteria_version


def test_a_changed_query_is_a_reason_too(cast: Cast) -> None:
    candidate = settled(cast)
    queries_import(
        project=cast.alpha,
        records=[
            QueryRecord(line=1, external_id=candidate.query.external_id, text="How do I change my phone?")
        ],
    )
    assert list(Candidate.objects.final_to_recheck()) == [candidate]
    assert recheck(candidate, cast.reviewer, 2).reasons == "query"


def test_nothing_to_re_check_and_a_second_reviewer_are_told_who_did_it(cast: Cast) -> None:
    candidate = settled(cast)
    with pytest.raises(AlreadyRechecked, match="nothing to re-check"):
        recheck(candidate, cast.reviewer, 2)
    change_document(candidate)
    seen = recheck_token(candidate)
    final_grade_recheck(candidate=candidate, by=cast.reviewer, grade=2, seen=seen)
    with pytest.raises(AlreadyRechecked, match="Already re-checked by rita: final grade 2"):
        final_grade_recheck(candidate=candidate, by=cast.owner, grade=3, note="x", seen=seen)
    assert FinalGradeRecheck.objects.count() == 1


def test_a_re_check_made_on_an_outdated_page_is_refused(cast: Cast) -> None:
    candidate = settled(cast)
    change_document(candidate)
    seen = recheck_token(candidate)
    change_document(candidate, body=NEW_BODY + " Or call us.")  # version 3 since the page was shown
    with pytest.raises(PairChangedSinceShown, match="changed since the page was shown"):
        final_grade_recheck(candidate=candidate, by=cast.reviewer, grade=2, seen=seen)
    assert not FinalGradeRecheck.objects.exists()
    # Read again: accepted, on version 3.
    assert recheck(candidate, cast.reviewer, 2).document_version.version == 3


@pytest.mark.parametrize("who", ["editor", "grader", "outsider"])
def test_only_a_reviewer_who_did_not_grade_the_pair_may_re_check_it(cast: Cast, who: str) -> None:
    from annotator.models import Membership, Role

    if who == "grader":
        Membership.objects.filter(project=cast.alpha, user=cast.editor2).update(role=Role.REVIEWER)
    candidate = settled(cast)
    change_document(candidate)
    user = {"editor": cast.editor, "grader": cast.editor2, "outsider": cast.outsider}[who]
    expected = "You graded this pair" if who == "grader" else "Only a reviewer or an owner"
    with pytest.raises(DisputeError, match=expected):
        recheck(candidate, user, 2)
    assert not FinalGradeRecheck.objects.exists()


def test_pairs_still_being_graded_disputed_or_frozen_are_not_re_checked_here(cast: Cast) -> None:
    unsettled = make_pair(cast.alpha, document="C")
    grade(unsettled, cast.editor, 2)
    change_document(unsettled)
    with pytest.raises(DisputeError, match="not settled"):
        final_grade_recheck(candidate=unsettled, by=cast.reviewer, grade=2, seen="")

    candidate = settled(cast)
    change_document(candidate)
    pool_freeze(
        grading_set=candidate.grading_set, by=cast.owner, exclude_unsettled=True, reason="Next round."
    )
    with pytest.raises(DisputeError, match="frozen"):
        recheck(candidate, cast.reviewer, 2)
    assert not Candidate.objects.final_to_recheck().exists()


def test_a_re_check_record_is_append_only(cast: Cast) -> None:
    candidate = settled(cast)
    change_document(candidate)
    record = recheck(candidate, cast.reviewer, 2)
    record.note = "rewritten"
    with pytest.raises(ValueError, match="append-only"):
        record.save()


@pytest.mark.parametrize("rechecked", [True, False])
def test_freezing_records_the_document_version_the_final_grade_stands_on(cast: Cast, rechecked: bool) -> None:
    candidate = settled(cast)
    change_document(candidate)
    if rechecked:
        recheck(candidate, cast.reviewer, 2)
    version = pool_freeze(grading_set=candidate.grading_set, by=cast.owner)
    judgment = PoolJudgment.objects.get(version=version)
    assert judgment.document_version.version == (2 if rechecked else 1)
    assert version.evidence_gap().exists() is not rechecked


def test_a_dispute_settled_on_the_graded_text_is_re_checked_on_the_new_one(cast: Cast) -> None:
    """The reviewer's dispute page shows the version the editors graded, so settling it does not
    clear the flags: the pair then waits for a re-check on the current text."""
    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (1, 3))
    change_document(dispute.candidate)
    dispute_settle(dispute=dispute, by=cast.reviewer, grade=3)
    assert list(Candidate.objects.final_to_recheck()) == [dispute.candidate]
    record = recheck(dispute.candidate, cast.owner, 2, note="v2 lost the deadline.")
    assert (record.old_source, record.old_decided_by, record.old_grade) == (
        FinalSource.ADJUDICATED,
        cast.reviewer,
        3,
    )


def test_the_timeline_keeps_the_first_decision_and_tells_each_re_check(cast: Cast) -> None:
    from annotator.models import Membership

    candidate = settled(cast)
    change_document(candidate)
    recheck(candidate, cast.reviewer, 1, note="Deadline gone.")
    membership = Membership.objects.get(project=cast.alpha, user=cast.owner)
    events = pair_timeline(candidate=candidate, viewer=cast.owner, membership=membership).events
    decided = [e for e in events if e.kind == "decided"]
    rechecks = [e for e in events if e.kind == "final_rechecked"]
    assert [(e.grade, e.source, e.actor) for e in decided] == [(2, FinalSource.UNANIMOUS, None)]
    assert [(e.old_grade, e.grade, e.actor, e.text, e.document_version) for e in rechecks] == [
        (2, 1, cast.reviewer, "Deadline gone.", 2)
    ]
    assert events.index(decided[0]) < events.index(rechecks[0])


# --- the pages -------------------------------------------------------------------------------------


def test_the_list_is_for_reviewers_of_the_project(cast: Cast, client: Client) -> None:
    candidate = settled(cast)
    change_document(candidate)
    client.force_login(cast.editor)
    assert client.get(url("final_recheck_list")).status_code == 403
    assert client.get(url("final_recheck", candidate_id=candidate.pk)).status_code == 403
    client.force_login(cast.outsider)  # owner of another project
    assert client.get(url("final_recheck_list")).status_code == 404
    assert client.get(url("final_recheck", candidate_id=candidate.pk)).status_code == 404
    beta = reverse("final_recheck", kwargs={"slug": "beta", "candidate_id": candidate.pk})
    assert client.get(beta).status_code == 404  # a pair of alpha is not found under beta
    client.force_login(cast.reviewer)
    page = client.get(url("final_recheck_list")).content.decode()
    assert url("final_recheck", candidate_id=candidate.pk) in page
    assert "The document changed since this grade was given." in page


def test_an_empty_list_says_so(cast: Cast, client: Client) -> None:
    settled(cast)
    client.force_login(cast.reviewer)
    page = client.get(url("final_recheck_list")).content.decode()
    assert "No settled pair needs re-checking" in page


def _seen(page: str) -> str:
    match = re.search(r'name="seen" value="([0-9a-f]+)"', page)
    assert match, "the page carries what it showed"
    return match.group(1)


def open_recheck(client: Client, user: object, candidate: Candidate) -> tuple[str, str]:
    """Sign in as `user` and open the pair's re-check page: (its address, the page's HTML)."""
    client.force_login(user)  # type: ignore[arg-type]
    target = url("final_recheck", candidate_id=candidate.pk)
    return target, client.get(target).content.decode()


def test_the_page_shows_the_current_text_and_the_graded_one_and_records_the_re_check(
    cast: Cast, client: Client
) -> None:
    candidate = settled(cast)
    change_document(candidate)
    target, page = open_recheck(client, cast.reviewer, candidate)
    assert NEW_BODY in page  # what users read now
    assert "B · version 2" in page  # the heading names the version shown
    assert (
        "The document as graded (version 1)" in page
        and "How to request a change after submitting (B)." in page
    )
    assert (
        'type="radio" name="grade" value="2"' in page and "checked" not in page
    )  # nothing chosen in advance

    response = client.post(target, {"grade": "3", "note": "", "seen": _seen(page)})
    assert response.status_code == 200 and "needs a note saying why" in response.content.decode()
    assert not FinalGradeRecheck.objects.exists()

    response = client.post(target, {"grade": "3", "note": "Now has the deadline.", "seen": _seen(page)})
    assert response.status_code == 302 and response["Location"] == url("final_recheck_list")
    assert FinalGrade.objects.get(candidate=candidate).grade == 3
    listing = client.get(response["Location"]).content.decode()
    assert "final grade changed from 2 to 3" in listing and "No settled pair needs re-checking" in listing


def test_after_a_re_check_the_next_pair_opens(cast: Cast, client: Client) -> None:
    first, second = settled(cast, document="B"), settled(cast, document="C")
    change_document(first)
    change_document(second)
    target, page = open_recheck(client, cast.reviewer, first)
    response = client.post(target, {"grade": "2", "seen": _seen(page)})
    assert response["Location"] == url("final_recheck", candidate_id=second.pk)


def test_an_outdated_page_gets_409_with_the_pair_as_it_is_now_and_the_typed_choice(
    cast: Cast, client: Client
) -> None:
    candidate = settled(cast)
    change_document(candidate)
    target, page = open_recheck(client, cast.reviewer, candidate)
    old_seen = _seen(page)
    change_document(candidate, body="Version three of the text.")
    response = client.post(target, {"grade": "1", "note": "Typed note", "seen": old_seen})
    page = response.content.decode()
    assert response.status_code == 409
    assert "changed since the page was shown" in page and "Version three of the text." in page
    assert "Typed note" in page and re.search(r'value="1"[^>]*checked', page)
    assert _seen(page) != old_seen and not FinalGradeRecheck.objects.exists()


@pytest.mark.parametrize(
    "data",
    [
        {"grade": "7", "seen": "x"},
        {"grade": "", "seen": "x"},
        {"grade": "3", "note": "x" * 5001, "seen": "x"},
    ],
)
def test_bad_form_input_is_a_clear_refusal_not_a_500(
    cast: Cast, client: Client, data: dict[str, str]
) -> None:
    candidate = settled(cast)
    change_document(candidate)
    client.force_login(cast.reviewer)
    response = client.post(url("final_recheck", candidate_id=candidate.pk), data)
    assert response.status_code in (200, 409)
    assert not FinalGradeRecheck.objects.exists()
    assert "errorlist" in response.content.decode() or "changed since" in response.content.decode()


def test_a_pair_with_nothing_to_re_check_says_why_and_has_no_form(cast: Cast, client: Client) -> None:
    candidate = settled(cast)
    target, page = open_recheck(client, cast.reviewer, candidate)
    assert "there is nothing to re-check" in page and 'name="seen"' not in page
    response = client.post(target, {"grade": "2", "seen": "0" * 32})
    assert response.status_code == 409 and "there is nothing to re-check" in response.content.decode()


def test_the_editors_list_points_to_the_reviewer_and_clears_after_the_re_check(
    cast: Cast, client: Client
) -> None:
    candidate = settled(cast)
    change_document(candidate)
    client.force_login(cast.editor)
    page = client.get(url("stale_list")).content.decode()
    assert "a reviewer re-checks its final grade" in page
    recheck(candidate, cast.reviewer, 2)
    assert "Nothing to re-check" in client.get(url("stale_list")).content.decode()


def test_the_queue_and_the_overview_count_the_pairs_to_re_check(cast: Cast, client: Client) -> None:
    candidate = settled(cast)
    client.force_login(cast.reviewer)
    assert "re-check" not in client.get(url("dispute_queue")).content.decode().lower().split("<main")[-1]
    change_document(candidate)
    assert "1 settled pair needs re-checking" in client.get(url("dispute_queue")).content.decode()
    overview = client.get(reverse("project_detail", kwargs={"slug": "alpha"})).content.decode()
    assert "Settled pairs to re-check: 1" in overview


def test_criteria_shown_are_the_current_ones(cast: Cast, client: Client) -> None:
    candidate = settled(cast)
    levels = {3: "Answers every part, with the deadline.", 2: "Most of it.", 1: "A little.", 0: "Nothing."}
    criteria_publish(
        project=cast.alpha, levels=levels, change=CriteriaChange.MEANING, note="x", by=cast.owner
    )
    client.force_login(cast.reviewer)
    page = client.get(url("final_recheck", candidate_id=candidate.pk)).content.decode()
    assert "Answers every part, with the deadline." in page
    assert CriteriaVersion.objects.current_for(cast.alpha).number == 2


@pytest.mark.parametrize("seen", [None, "", "x" * 200, "0" * 32])
def test_a_missing_or_mangled_digest_is_refused_like_an_outdated_page(
    cast: Cast, client: Client, seen: str | None
) -> None:
    """A missing or over-long value is refused as outdated, not with Django's "(Hidden field seen)"."""
    candidate = settled(cast)
    change_document(candidate)
    client.force_login(cast.reviewer)
    data = {"grade": "2"} if seen is None else {"grade": "2", "seen": seen}
    response = client.post(url("final_recheck", candidate_id=candidate.pk), data)
    page = response.content.decode()
    assert response.status_code == 409 and "changed since the page was shown" in page
    assert "Hidden field" not in page and not FinalGradeRecheck.objects.exists()


def test_an_over_long_note_is_one_error_not_also_a_missing_note(cast: Cast, client: Client) -> None:
    candidate = settled(cast)
    change_document(candidate)
    target, page = open_recheck(client, cast.reviewer, candidate)
    response = client.post(target, {"grade": "3", "note": "x" * 5001, "seen": _seen(page)})
    html = response.content.decode()
    assert response.status_code == 200 and "at most 5000 characters" in html
    assert "needs a note saying why" not in html


def test_a_second_reviewer_sees_what_they_chose_was_not_recorded_and_the_reason_once(
    cast: Cast, client: Client
) -> None:
    candidate = settled(cast)
    change_document(candidate)
    target, page = open_recheck(client, cast.owner, candidate)
    seen = _seen(page)
    recheck(candidate, cast.reviewer, 2)  # rita, meanwhile
    response = client.post(target, {"grade": "1", "note": "Owner thinks 1.", "seen": seen})
    page = response.content.decode()
    assert response.status_code == 409
    assert page.count("Already re-checked by rita: final grade 2.") == 1
    assert "Your choice was not recorded: grade 1." in page and "Owner thinks 1." in page
    assert 'name="seen"' not in page


def test_a_refusal_comes_before_the_form_check_and_is_said_once(cast: Cast, client: Client) -> None:
    from annotator.models import Membership, Role

    Membership.objects.filter(project=cast.alpha, user=cast.editor2).update(role=Role.REVIEWER)
    candidate = settled(cast)
    change_document(candidate)
    client.force_login(cast.editor2)  # graded it
    response = client.post(url("final_recheck", candidate_id=candidate.pk), {"grade": "9"})
    page = response.content.decode()
    assert response.status_code == 409
    assert page.count("You graded this pair, so you cannot re-check its final grade") == 1
    assert "is not a grade" not in page


def test_the_next_pair_is_the_one_after_in_the_list_then_the_first(cast: Cast, client: Client) -> None:
    pairs = [settled(cast, document=d) for d in ("B", "C", "D")]
    for pair in pairs:
        change_document(pair)
    client.force_login(cast.reviewer)

    def recheck_page(pair: Candidate) -> str:
        target = url("final_recheck", candidate_id=pair.pk)
        response = client.post(target, {"grade": "2", "seen": _seen(client.get(target).content.decode())})
        return response["Location"]

    assert recheck_page(pairs[1]) == url("final_recheck", candidate_id=pairs[2].pk)  # C -> D
    assert recheck_page(pairs[2]) == url("final_recheck", candidate_id=pairs[0].pk)  # D -> back to B
    assert recheck_page(pairs[0]) == url("final_recheck_list")


def test_the_page_shows_the_criteria_the_grades_were_given_under_and_says_queries_keep_no_history(
    cast: Cast, client: Client
) -> None:
    candidate = settled(cast)
    levels = {3: "Answers every part, with the deadline.", 2: "Most of it.", 1: "A little.", 0: "Nothing."}
    criteria_publish(
        project=cast.alpha, levels=levels, change=CriteriaChange.MEANING, note="x", by=cast.owner
    )
    queries_import(
        project=cast.alpha,
        records=[
            QueryRecord(line=1, external_id=candidate.query.external_id, text="How do I change my phone?")
        ],
    )
    client.force_login(cast.reviewer)
    page = client.get(url("final_recheck", candidate_id=candidate.pk)).content.decode()
    old = CriteriaVersion.objects.get(project=cast.alpha, number=1)
    assert "The criteria as graded (version 1)" in page and old.level_3 in page
    assert "Queries keep no earlier versions" in page


def test_a_changed_final_grade_shows_its_note_once(cast: Cast, client: Client) -> None:
    candidate = settled(cast)
    change_document(candidate)
    recheck(candidate, cast.reviewer, 1, note="A note to show once.")
    change_document(candidate, body="Third text.")
    client.force_login(cast.owner)
    page = client.get(url("final_recheck", candidate_id=candidate.pk)).content.decode()
    assert page.count("A note to show once.") == 1


def test_the_page_shows_each_editors_reason_and_revision_from_the_dispute(cast: Cast, client: Client) -> None:
    """A pair settled by discussion (one editor revised 1 -> 0) shows the revision and the dispute's
    reasons, or it would read as a disagreement nobody had settled."""
    from annotator.disputes.services import dispute_give_reason, dispute_revise
    from tests.factories import disputed_pair

    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 1))
    dispute_give_reason(dispute=dispute, editor=cast.editor, reason="No refund rule at all.")
    dispute_give_reason(dispute=dispute, editor=cast.editor2, reason="Mentions cancelling.", criteria_level=1)
    dispute_revise(dispute=dispute, editor=cast.editor, grade=0)
    dispute_revise(dispute=dispute, editor=cast.editor2, grade=0, note="Cancelling alone does not answer it.")
    assert FinalGrade.objects.get(candidate=dispute.candidate).source == FinalSource.DISCUSSION
    change_document(dispute.candidate)

    _target, page = open_recheck(client, cast.reviewer, dispute.candidate)
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "Grade 1 → 0 (revised after the reveal)" in text
    assert "Grade 0 (kept after the reveal)" in text
    assert "No refund rule at all." in page and "Mentions cancelling." in page
    assert "Rests on criteria level 1." in page
    assert "Cancelling alone does not answer it." in page


def test_a_dispute_reason_equal_to_the_grades_reason_is_shown_once(cast: Cast, client: Client) -> None:
    """The reason given with the grade and the same text given in the dispute show once."""
    from annotator.disputes.services import dispute_give_reason, dispute_revise
    from tests.factories import disputed_pair

    dispute = disputed_pair(cast.alpha, cast.editor, cast.editor2, (0, 1))
    for editor, reason in ((cast.editor, "No refund rule at all."), (cast.editor2, "Mentions cancelling.")):
        Grade.objects.filter(candidate=dispute.candidate, editor=editor).update(reason=reason)
        dispute_give_reason(dispute=dispute, editor=editor, reason=reason)
    dispute_revise(dispute=dispute, editor=cast.editor, grade=0)
    dispute_revise(dispute=dispute, editor=cast.editor2, grade=0)
    change_document(dispute.candidate)
    _target, page = open_recheck(client, cast.reviewer, dispute.candidate)
    assert page.count("No refund rule at all.") == 1 and page.count("Mentions cancelling.") == 1
    assert "Reason in the dispute" not in page


def test_a_pair_settled_without_a_dispute_shows_the_grades_alone(cast: Cast, client: Client) -> None:
    candidate = settled(cast)
    change_document(candidate)
    _target, page = open_recheck(client, cast.reviewer, candidate)
    assert "after the reveal" not in page and "Reason in the dispute" not in page
    assert "Ed read v1" in page and "Eve read v1" in page
