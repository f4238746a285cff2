"""A whole dispute in the browser: two editors grade one pair differently on the grading page,
each gives the basis of their grade blind, both keep their grades after the reveal, the reviewer
settles it with a note, and the pair's timeline tells all of it in order."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from annotator.models import Dispute, Membership, Role
from tests.conftest import PASSWORD, make_user
from tests.e2e.conftest import log_in
from tests.factories import make_pair

ED_REASON = "Explains how to request a change but not the deadline."
EVE_REASON = "Names the entry point and the phone field: enough to act."
NOTE = "Steps are there but no deadline; background at most for a reader in a hurry."


@pytest.fixture
def people(browser: Browser) -> Iterator[dict[str, Page]]:
    """One browser context (own cookies) per person."""
    contexts = {
        name: browser.new_context(locale="en-US", viewport={"width": 1280, "height": 900})
        for name in ("ed", "eve", "rita")
    }
    pages = {}
    for name, context in contexts.items():
        context.set_default_timeout(10_000)
        pages[name] = context.new_page()
    yield pages
    for context in contexts.values():
        context.close()


def grade_on_the_grading_page(
    page: Page, base_url: str, url: str, candidate_id: int, value: int, reason: str
) -> None:
    page.goto(base_url + url)
    row = page.locator(f"#cand-{candidate_id}")
    row.get_by_label("Reason (optional): which condition is met or missing").fill(reason)
    row.locator(f'button[name="grade"][value="{value}"]').click()
    # "Saved: grade 3." even once both grades are in and differ: the pair settles when the editor
    # leaves the query, so the row says nothing of the other grade.
    expect(page.locator(f"#cand-{candidate_id}")).to_contain_text(f"Saved: grade {value}.")
    expect(page.locator(f"#cand-{candidate_id}")).not_to_contain_text(re.compile("dispute|Settled", re.I))


def test_two_editors_disagree_give_reasons_and_the_reviewer_settles_with_a_note(
    people: dict[str, Page], live_server: Any, transactional_db: None, cast_for_browser: dict[str, Any]
) -> None:
    base = live_server.url
    pair = cast_for_browser["pair"]
    ed, eve, rita = people["ed"], people["eve"], people["rita"]
    grade_url = f"/p/alpha/sets/{pair.grading_set_id}/queries/{pair.query_id}/grade/"

    log_in(ed, base, "ed", PASSWORD)
    grade_on_the_grading_page(ed, base, grade_url, pair.pk, 2, "No deadline mentioned.")
    log_in(eve, base, "eve", PASSWORD)
    grade_on_the_grading_page(eve, base, grade_url, pair.pk, 3, "")
    assert not Dispute.objects.exists()
    # Leaving the query opens the dispute, and only then is Eve told of it.
    eve.get_by_role("button", name="Next query").click()
    expect(eve.locator("#messages")).to_contain_text("1 dispute waits for your reason")
    assert Dispute.objects.count() == 1

    # Ed finds the dispute from the navigation: his side only, nothing of Eve's.
    ed.goto(f"{base}/p/alpha/")
    ed.get_by_role("link", name="Disputes", exact=True).click()
    expect(ed.get_by_text("Give your reason.")).to_be_visible()
    ed.get_by_role("link", name="q1 / B").click()
    expect(ed.get_by_text("Reasons in: 0 of 2.")).to_be_visible()
    expect(ed.locator("#dispute-main")).not_to_contain_text(re.compile(r"\beve\b"))
    # The note Ed wrote while grading is offered as a start; the reason counts only once saved here.
    expect(ed.get_by_role("textbox", name="The basis of your grade")).to_have_value("No deadline mentioned.")
    ed.get_by_role("textbox", name="The basis of your grade").fill(ED_REASON)
    ed.get_by_label("Criteria level it rests on (optional)").select_option("2")
    ed.get_by_role("button", name="Save my reason").click()
    expect(ed.get_by_text("Your reason is saved.")).to_be_visible()
    expect(ed.get_by_text("Reasons in: 1 of 2.")).to_be_visible()
    expect(ed.locator("#dispute-main .grade-chip")).to_have_text(["2"])  # Eve's grade stays hidden

    # Eve's reason is the last one: the reveal. She reads Ed's reason and keeps her 3.
    eve.goto(f"{base}/p/alpha/disputes/")
    eve.get_by_role("link", name="q1 / B").click()
    eve.get_by_role("textbox", name="The basis of your grade").fill(EVE_REASON)
    eve.get_by_role("button", name="Save my reason").click()
    expect(eve.get_by_text("the grades and reasons are now revealed")).to_be_visible()
    expect(eve.locator("#dispute-main")).to_contain_text(ED_REASON)
    eve.get_by_role("textbox", name="Why (optional)").fill("The steps are enough for this reader.")
    # One click answers (the answer is final): she keeps her 3.
    expect(eve.locator("#dispute-main input[name=grade]")).to_have_count(0)
    eve.get_by_role("button", name="Keep my 3").click()
    expect(eve.get_by_text("You kept your grade 3.")).to_be_visible()

    # Ed now sees Eve's side and keeps his 2: still apart, so it goes to the reviewer.
    ed.reload()
    expect(ed.locator("#dispute-main")).to_contain_text(EVE_REASON)
    ed.keyboard.press("k")  # "Keep my 2" by its key
    expect(ed.get_by_text("The grades still differ: the dispute goes to a reviewer.")).to_be_visible()

    # Rita: the queue, names hidden, an override without a note is refused, then settled with one.
    log_in(rita, base, "rita", PASSWORD)
    rita.goto(f"{base}/p/alpha/")
    rita.get_by_role("link", name="Disputes waiting for a reviewer: 1").click()
    rita.get_by_role("link", name="Review q1 / B").click()
    # A grade chosen and a note begun survive hiding the names.
    expect(rita.get_by_role("button", name="Adopt ed's grade (2)")).to_be_visible()
    rita.get_by_text("Set another grade (needs a note)").click()
    rita.get_by_label("3", exact=True).check()
    rita.get_by_role("textbox", name="Note").fill("a first thought")
    rita.get_by_role("link", name="Hide names (Editor 1, Editor 2…)").click()
    expect(rita.get_by_role("heading", name="Editor 1")).to_be_visible()
    expect(rita.get_by_role("heading", name="Editor 2")).to_be_visible()
    expect(rita.get_by_role("button", name="Adopt Editor 1's grade (2)")).to_be_visible()
    expect(rita.locator("#adopt-form")).not_to_contain_text("ed's")
    expect(rita.locator("#dispute-review")).to_contain_text(ED_REASON)
    expect(rita.get_by_label("3", exact=True)).to_be_checked()
    expect(rita.get_by_role("textbox", name="Note")).to_have_value("a first thought")
    rita.get_by_role("textbox", name="Note").fill("")
    rita.get_by_label("1", exact=True).check()
    rita.get_by_role("button", name="Settle").click()
    expect(rita.get_by_text("write a note saying why you override them")).to_be_visible()
    rita.get_by_label("1", exact=True).check()
    rita.get_by_role("textbox", name="Note").fill(NOTE)
    rita.get_by_role("button", name="Settle").click()
    expect(rita.get_by_text("Settled: final grade 1.")).to_be_visible()
    expect(rita.locator("#dispute-review")).to_contain_text("decided by rita")

    # The timeline: with names still hidden (the choice holds for the session), the editors are
    # numbered there too...
    rita.get_by_role("link", name="Timeline of this pair").click()
    events = rita.locator(".timeline-event")
    expect(events.first).to_contain_text("Editor ")
    expect(rita.locator(".timeline")).not_to_contain_text("ed graded")
    # ...and with names shown, every step, in order.
    rita.goto(rita.url.split("?")[0] + "?names=show")
    expected = [
        "ed graded 2.",
        "eve graded 3.",
        "dispute opened (severity 1)",
        "ed gave the basis of grade 2.",
        "eve gave the basis of grade 3.",
        "revealed to the editors",
        "eve kept the grade 3 after the reveal.",
        "ed kept the grade 2 after the reveal.",
        "sent to the review queue",
        "rita settled it: final grade 1.",
    ]
    expect(events).to_have_count(len(expected))
    for i, text in enumerate(expected):
        expect(events.nth(i)).to_contain_text(text)
    expect(events.nth(3)).to_contain_text(ED_REASON)
    expect(events.nth(len(expected) - 1)).to_contain_text(NOTE)


@pytest.fixture
def cast_for_browser(transactional_db: None) -> dict[str, Any]:
    from annotator.models import Project

    alpha = Project.objects.create(name="Alpha", slug="alpha")
    users = {name: make_user(name) for name in ("ed", "eve", "rita")}
    Membership.objects.create(project=alpha, user=users["ed"], role=Role.EDITOR)
    Membership.objects.create(project=alpha, user=users["eve"], role=Role.EDITOR)
    Membership.objects.create(project=alpha, user=users["rita"], role=Role.REVIEWER)
    return {"project": alpha, "pair": make_pair(alpha), **users}


@pytest.mark.parametrize("width", [390, 1280])
def test_a_reason_without_spaces_wraps_instead_of_widening_the_dispute_pages(
    browser: Browser, live_server: Any, cast_for_browser: dict[str, Any], width: int
) -> None:
    """A reason of a URL and thousands more characters wraps: the review page, the dispute page
    and the timeline stay as wide as the window, the text within its editor's column."""
    from annotator.models import DisputeStatement
    from tests.factories import in_review

    dispute = in_review(cast_for_browser["project"], cast_for_browser["ed"], cast_for_browser["eve"])
    DisputeStatement.objects.filter(dispute=dispute, editor=cast_for_browser["ed"]).update(
        reason="https://example.com/" + "x" * 4970
    )
    context = browser.new_context(locale="en-US", viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server.url, "rita", PASSWORD)
        for path in (
            f"/p/alpha/disputes/{dispute.pk}/review/",
            f"/p/alpha/disputes/{dispute.pk}/",
            f"/p/alpha/disputes/pairs/{dispute.candidate_id}/timeline/",
        ):
            page.goto(live_server.url + path)
            expect(page.get_by_text("https://example.com/", exact=False).first).to_be_visible()
            scroll_width = page.evaluate("document.documentElement.scrollWidth")
            assert scroll_width <= width, (path, scroll_width)
    finally:
        context.close()


def test_a_reviewer_re_checks_a_settled_pair_whose_document_changed_with_the_keyboard(
    page: Page, live_server: Any, cast_for_browser: dict[str, Any]
) -> None:
    """The editors' flag on a settled pair clears only through a reviewer: overview -> list -> pair,
    the new text and the graded one on the page, a grade chosen and a note typed from the keyboard."""
    from annotator.documents.readers import DocumentRecord
    from annotator.documents.services import documents_import
    from annotator.models import FinalGrade, Grade
    from tests.factories import grade

    pair = cast_for_browser["pair"]
    grade(pair, cast_for_browser["ed"], 2)
    grade(pair, cast_for_browser["eve"], 2)
    documents_import(
        project=cast_for_browser["project"],
        records=[
            DocumentRecord(line=1, external_id="B", body="Settings, then Contact: no deadline any more.")
        ],
    )
    base = live_server.url
    log_in(page, base, "rita", PASSWORD)
    page.goto(f"{base}/p/alpha/")
    page.get_by_role("link", name="Settled pairs to re-check: 1").click()
    page.get_by_role("link", name="Re-check q1 / B").click()
    expect(page.get_by_role("region", name="Document body")).to_contain_text("no deadline any more")
    page.get_by_text("The document as graded (version 1)").click()  # the <details> opens
    expect(page.get_by_role("region", name="Document body, version 1")).to_be_visible()

    page.get_by_role("radio", name="1").focus()
    page.keyboard.press("Space")
    expect(page.get_by_role("radio", name="1")).to_be_checked()
    page.keyboard.press("Tab")
    expect(page.get_by_role("textbox", name="Note")).to_be_focused()
    page.keyboard.type("The deadline is gone from the new text.")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # "Record the re-check"
    expect(page.get_by_text("Re-checked q1 / B: final grade changed from 2 to 1.")).to_be_visible()
    expect(page.get_by_text("No settled pair needs re-checking")).to_be_visible()
    assert FinalGrade.objects.get(candidate=pair).grade == 1
    assert not Grade.objects.filter(candidate=pair, stale=True).exists()

    page.goto(f"{base}/p/alpha/disputes/pairs/{pair.pk}/timeline/")
    expect(page.locator(".event-final_rechecked")).to_contain_text(
        "rita re-checked the settled pair on document version 2 (its grades were marked for re-checking) and "
        "changed the final grade from 2 to 1."
    )


def test_a_re_check_refused_because_another_reviewer_was_first_takes_the_focus_to_the_refusal(
    page: Page, live_server: Any, cast_for_browser: dict[str, Any]
) -> None:
    """The 409 page says who was first and takes the focus, not left on <body>."""
    from annotator.disputes.rechecks import final_grade_recheck, recheck_token
    from annotator.documents.readers import DocumentRecord
    from annotator.documents.services import documents_import
    from tests.factories import grade

    pair, project = cast_for_browser["pair"], cast_for_browser["project"]
    grade(pair, cast_for_browser["ed"], 2)
    grade(pair, cast_for_browser["eve"], 2)
    documents_import(project=project, records=[DocumentRecord(line=1, external_id="B", body="New text.")])
    other = make_user("olga")
    Membership.objects.create(project=project, user=other, role=Role.REVIEWER)
    log_in(page, live_server.url, "rita", PASSWORD)
    page.goto(f"{live_server.url}/p/alpha/disputes/pairs/{pair.pk}/recheck/")
    page.get_by_role("radio", name="2").check()
    final_grade_recheck(candidate=pair, by=other, grade=2, seen=recheck_token(pair))  # olga, meanwhile
    page.get_by_role("button", name="Record the re-check").click()
    refusal = page.get_by_role("alert").filter(has_text="Already re-checked by olga: final grade 2.")
    expect(refusal).to_be_focused()
    expect(page.get_by_text("Your choice was not recorded: grade 2.")).to_be_visible()


def test_a_reason_saved_while_the_database_is_busy_says_so_in_the_page(
    people: dict[str, Page],
    live_server: Any,
    transactional_db: None,
    cast_for_browser: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An htmx form answered 503 (SQLite locked by an import) says why, not only that it failed."""
    from django.db import OperationalError

    from annotator.disputes import views as dispute_views
    from tests.factories import grade

    def locked(**kwargs: Any) -> None:
        raise OperationalError("database is locked")

    pair = cast_for_browser["pair"]
    grade(pair, cast_for_browser["ed"], 2)
    grade(pair, cast_for_browser["eve"], 3)
    monkeypatch.setattr(dispute_views, "dispute_give_reason", locked)
    ed = people["ed"]
    log_in(ed, live_server.url, "ed", PASSWORD)
    ed.goto(f"{live_server.url}/p/alpha/disputes/")
    ed.get_by_role("link", name="q1 / B").click()
    ed.get_by_role("textbox", name="The basis of your grade").fill(ED_REASON)
    ed.get_by_role("button", name="Save my reason").click()
    expect(ed.locator("#messages")).to_contain_text("The database is busy writing something large")
    expect(ed.get_by_role("textbox", name="The basis of your grade")).to_have_value(ED_REASON)  # kept


def test_a_reason_saved_while_the_database_is_unreachable_says_that_in_the_page(
    people: dict[str, Page],
    live_server: Any,
    transactional_db: None,
    cast_for_browser: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An htmx form answered 503 because PostgreSQL cannot be reached says the answer's sentence,
    not the busy one the page carries."""
    import psycopg
    from django.db import OperationalError

    from annotator.disputes import views as dispute_views
    from tests.factories import grade

    def unreachable(**kwargs: Any) -> None:
        raise OperationalError("connection refused") from psycopg.OperationalError("connection refused")

    pair = cast_for_browser["pair"]
    grade(pair, cast_for_browser["ed"], 2)
    grade(pair, cast_for_browser["eve"], 3)
    monkeypatch.setattr(dispute_views, "dispute_give_reason", unreachable)
    ed = people["ed"]
    log_in(ed, live_server.url, "ed", PASSWORD)
    ed.goto(f"{live_server.url}/p/alpha/disputes/")
    ed.get_by_role("link", name="q1 / B").click()
    ed.get_by_role("textbox", name="The basis of your grade").fill(ED_REASON)
    ed.get_by_role("button", name="Save my reason").click()
    expect(ed.locator("#messages")).to_contain_text("The database cannot be reached right now")
    expect(ed.get_by_role("textbox", name="The basis of your grade")).to_have_value(ED_REASON)  # kept


def test_a_reviewer_settles_a_dispute_with_the_keyboard_only_by_the_adopt_shortcut(
    page: Page, live_server: Any, cast_for_browser: dict[str, Any]
) -> None:
    """No mouse, no Tab: "b" on the review page adopts the second editor's grade and settles."""
    from annotator.models import FinalGrade, FinalSource
    from tests.factories import in_review

    dispute = in_review(cast_for_browser["project"], cast_for_browser["ed"], cast_for_browser["eve"], (1, 0))
    log_in(page, live_server.url, "rita", PASSWORD)
    page.goto(f"{live_server.url}/p/alpha/disputes/{dispute.pk}/review/?names=hide")
    expect(page.get_by_role("button", name="Adopt Editor 2's grade (0)")).to_have_attribute(
        "aria-keyshortcuts", "b"
    )
    # Keys typed in the note are text, not shortcuts.
    page.get_by_text("Set another grade (needs a note)").press("Enter")
    page.get_by_role("textbox", name="Note").press("b")
    expect(page.get_by_role("textbox", name="Note")).to_have_value("b")
    assert not FinalGrade.objects.filter(candidate_id=dispute.candidate_id).exists()
    page.get_by_role("textbox", name="Note").fill("")
    page.keyboard.press("Tab")  # off the note to the Settle button, still in the main part
    page.keyboard.press("b")
    expect(page.get_by_text("Settled: final grade 0.")).to_be_visible()
    final = FinalGrade.objects.get(candidate_id=dispute.candidate_id)
    assert (final.grade, final.source, final.decided_by.get_username()) == (
        0,
        FinalSource.ADJUDICATED,
        "rita",
    )
