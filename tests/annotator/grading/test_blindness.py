"""Blindness, enforced on the server.

Nothing an editor can reach (pages, fragments) shows another editor's grade or reason, counts of
grades per value, or any system's rank or score; candidates appear in a stable per-editor order
that carries no run's ranking. Owners see provenance on the set page only.
"""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from annotator.documents import urls as urls_documents
from annotator.grading import urls as urls_grading
from annotator.grading.services import grade_submit
from annotator.models import Candidate, CandidateSource
from tests.conftest import Cast
from tests.factories import make_pairs

ED_REASON = "ED-PRIVATE-REASON-7f3a"
RUN_MARK = "secret-ranker"


def setup_pairs(cast: Cast) -> list[Candidate]:
    pairs = make_pairs(cast.alpha, "ABC", required=3, source=CandidateSource.POOLED)
    for rank, candidate in enumerate(pairs, start=1):
        candidate.source_detail = f"{RUN_MARK} #{rank} (k=3)"
        candidate.save()
    grade_submit(candidate=pairs[0], editor=cast.editor, value=3, reason=ED_REASON)
    grade_submit(candidate=pairs[1], editor=cast.editor, value=0, reason=ED_REASON)
    return pairs


def reachable_get_urls(cast: Cast, candidate: Candidate) -> list[str]:
    """Every GET page of the grading area, with this candidate's objects as arguments."""
    kwargs = {
        "slug": cast.alpha.slug,
        "set_id": candidate.grading_set_id,
        "query_id": candidate.query_id,
        "document_id": candidate.document_id,
        "candidate_id": candidate.pk,
    }
    urls = []
    for pattern in [*urls_documents.urlpatterns, *urls_grading.urlpatterns]:
        names = set(pattern.pattern.converters) | {"slug"}
        urls.append(reverse(pattern.name, kwargs={k: v for k, v in kwargs.items() if k in names}))
    return urls


def assert_blind(html: str, where: str) -> None:
    assert ED_REASON not in html, f"{where} shows another editor's reason"
    assert RUN_MARK not in html, f"{where} shows a run's name or rank"
    assert not re.search(r"#\d+ \(k=", html), f"{where} shows a pooled position"


def test_no_page_or_fragment_an_editor_reaches_shows_another_editors_grade_reason_or_run_ranks(
    cast: Cast, client: Client
) -> None:
    a, b, c = setup_pairs(cast)
    client.force_login(cast.editor2)  # Eve has graded nothing yet
    for path in reachable_get_urls(cast, a):
        response = client.get(path, follow=True)  # a redirect's target is checked too
        if response.status_code == 405:
            continue
        assert response.status_code in (200, 403), (path, response.status_code)
        assert_blind(response.content.decode(), path)
    page = client.get(
        reverse(
            "grade_page", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
        )
    ).content.decode()
    # Ed's 3 on A and 0 on B are nowhere on Eve's page: no pre-pressed button, no stored grade.
    assert 'aria-pressed="true"' not in page
    assert re.findall(r'data-grade="([^"]*)"', page) == ["", "", ""]
    assert "Your grade" not in page
    # The fragments Eve gets back when she saves or undoes carry nothing of Ed's either.
    saved = client.post(
        reverse(
            "grade_save", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "candidate_id": a.pk}
        ),
        {"grade": "1", "document_version": "1"},
        headers={"HX-Request": "true"},
    ).content.decode()
    assert_blind(saved, "grade_save fragment")
    assert re.findall(r'data-grade="([^"]*)"', saved) == ["1"]
    undone = client.post(
        reverse(
            "grade_undo", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
        ),
        headers={"HX-Request": "true"},
    ).content.decode()
    assert_blind(undone, "grade_undo fragment")


def test_progress_shows_totals_never_counts_per_grade_value(cast: Cast, client: Client) -> None:
    a, *_ = setup_pairs(cast)
    client.force_login(cast.editor2)
    page = client.get(
        reverse(
            "grade_page", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
        )
    ).content.decode()
    bars = re.search(r'<div id="progress".*?</div>\s*</header>', page, re.S).group(0)
    assert re.findall(r'value="(\d+)"', bars) == ["0", "0", "0"]  # no pair has all 3 grades; Eve has none
    assert "grade 3" not in bars.lower() and "grade 0" not in bars.lower()


def test_an_owner_sees_provenance_on_the_set_page_but_not_on_the_grading_page(
    cast: Cast, client: Client
) -> None:
    a, *_ = setup_pairs(cast)
    client.force_login(cast.owner)
    set_page = client.get(
        reverse("grading_set_detail", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id})
    )
    assert f"{RUN_MARK} #1 (k=3)" in set_page.content.decode()
    grade_page = client.get(
        reverse(
            "grade_page", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
        )
    )
    assert_blind(grade_page.content.decode(), "owner's grading page")
    client.force_login(cast.editor)
    assert (
        RUN_MARK
        not in client.get(
            reverse("grading_set_detail", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id})
        ).content.decode()
    )


def order_on_page(client: Client, cast: Cast, candidate: Candidate) -> list[str]:
    html = client.get(
        reverse(
            "grade_page",
            kwargs={
                "slug": cast.alpha.slug,
                "set_id": candidate.grading_set_id,
                "query_id": candidate.query_id,
            },
        )
    ).content.decode()
    return re.findall(r'data-candidate="(\d+)"', html)


def test_candidates_come_in_a_stable_per_editor_shuffle_not_in_run_order(cast: Cast, client: Client) -> None:
    pairs = make_pairs(cast.alpha, [f"D{i:02d}" for i in range(20)], source=CandidateSource.POOLED)
    run_order = [str(c.pk) for c in pairs]  # the order a run ranked them in
    client.force_login(cast.editor)
    ed_first, ed_again = order_on_page(client, cast, pairs[0]), order_on_page(client, cast, pairs[0])
    client.force_login(cast.editor2)
    eve = order_on_page(client, cast, pairs[0])
    assert ed_first == ed_again
    assert sorted(ed_first) == sorted(eve) == sorted(run_order)
    assert ed_first != run_order and eve != run_order and ed_first != eve


def test_candidate_ids_do_not_follow_a_runs_ranking(cast: Cast) -> None:
    """Editors' pages carry candidate IDs (row IDs, form URLs); pooled in rank order, sorting them
    would give the system's ranking back."""
    from annotator.grading.pooling import pool_top_k, read_run
    from annotator.grading.services import candidates_add
    from annotator.models import Candidate, Document, Query
    from tests.factories import make_set

    Query.objects.create(project=cast.alpha, external_id="q1", text="q")
    ranked = [f"d{i:02}" for i in range(40)]
    for doc in ranked:
        Document.upsert(project=cast.alpha, external_id=doc, title="", body=doc)
    run = "".join(f"q1 Q0 {doc} {rank} {100 - rank} sys\n" for rank, doc in enumerate(ranked, start=1))
    grading_set = make_set(cast.alpha, "Pooled")
    candidates_add(
        grading_set=grading_set,
        pairs=pool_top_k([("sys", read_run(run.encode(), "trec", "sys"))], 40),
        by=cast.owner,
        depth=40,
    )
    by_id = list(
        Candidate.objects.filter(grading_set=grading_set)
        .order_by("pk")
        .values_list("document__external_id", flat=True)
    )
    assert sorted(by_id) == ranked
    assert by_id != ranked  # 1 in 40! that a shuffle leaves them in rank order


def test_each_progress_bar_says_what_it_counts_and_a_first_editor_sees_their_query_done(
    cast: Cast, client: Client
) -> None:
    a, b, c = setup_pairs(cast)
    grade_submit(candidate=c, editor=cast.editor, value=1, reason=ED_REASON)  # Ed graded the query
    client.force_login(cast.editor)
    url = reverse(
        "grade_page", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
    )
    bars = re.search(
        r'<div id="progress".*?</div>\s*</header>', client.get(url).content.decode(), re.S
    ).group(0)
    labels = re.findall(r'class="progress-label[^"]*"[^>]*>([^<]+)<', bars)
    counts = re.findall(r'class="progress-count">([^<]+)<', bars)
    assert list(zip(labels, counts, strict=True)) == [
        ("This query: graded by you", "3 of 3"),
        ("Whole set: pairs with all their grades", "0 of 3"),  # each pair needs 3 editors
        ("Whole set: graded by you", "3 of 3"),
    ]


def test_only_the_editors_own_grade_is_marked_as_theirs_for_screen_readers(
    cast: Cast, client: Client
) -> None:
    a, *_ = setup_pairs(cast)  # Ed gave A a 3
    client.force_login(cast.editor)
    url = reverse(
        "grade_page", kwargs={"slug": cast.alpha.slug, "set_id": a.grading_set_id, "query_id": a.query_id}
    )
    page = client.get(url).content.decode()
    pressed = re.findall(
        r'value="(\d)"[^>]*aria-pressed="true"[^>]*>\d<span class="visually-hidden"> \(your grade\)', page
    )
    assert sorted(pressed) == ["0", "3"]  # A's 3 and B's 0 (rows in the page's order), nothing on C
    assert page.count("(your grade)") == 2
    client.force_login(cast.editor2)  # Eve sees none of Ed's grades as hers
    assert "(your grade)" not in client.get(url).content.decode()
