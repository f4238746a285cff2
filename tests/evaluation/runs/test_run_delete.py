"""Deleting a run: an unused run goes with its parsed ranking; a run a comparison uses is refused,
naming the comparisons, and nothing changes. Reviewers and owners only, POST only, this project only."""

from __future__ import annotations

import html
from collections.abc import Callable

import pytest
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from evaluation import metrics
from evaluation.comparisons import ComparisonInputError, comparison_create
from evaluation.models import Comparison, Run, RunQuery
from evaluation.runs import RunDeleteError, run_delete
from tests.concurrency import at_once, postgres_only
from tests.conftest import Cast
from tests.factories import E9_POOL, make_comparison, make_e9, make_pool, make_run


def delete_url(run: Run) -> str:
    return reverse("run_delete", kwargs={"slug": run.project.slug, "run_id": run.pk})


def page(response: HttpResponse) -> str:
    return html.unescape(response.content.decode())


@pytest.fixture
def used(cast: Cast) -> Comparison:
    """Run 甲 (A) against run 乙 (B) on the E9 pool: both runs are in use."""
    return make_e9(cast.alpha, owner=cast.owner, reviewer=cast.reviewer)


@pytest.mark.parametrize("role", ["reviewer", "owner"])
def test_a_reviewer_or_owner_deletes_an_unused_run_and_its_parsed_ranking_goes_too(
    cast: Cast, client: Client, role: str
) -> None:
    unused = make_run(cast.alpha, "bm25", {"q1": ["A", "B"], "q2": ["C"]}, by=cast.reviewer)
    kept = make_run(cast.alpha, "kept", {"q1": ["B"]}, by=cast.reviewer)
    assert RunQuery.objects.filter(run=unused).count() == 2
    client.force_login(getattr(cast, role))

    response = client.post(delete_url(unused))

    assert response.status_code == 302
    assert response["Location"] == reverse("run_list", kwargs={"slug": "alpha"})
    assert not Run.objects.filter(pk=unused.pk).exists()
    assert not RunQuery.objects.filter(run_id=unused.pk).exists()
    assert list(Run.objects.all()) == [kept] and RunQuery.objects.filter(run=kept).count() == 1
    listing = page(client.get(response["Location"]))
    assert "Run “bm25” deleted." in listing


def test_a_run_used_by_a_comparison_is_refused_naming_it_and_nothing_changes(
    cast: Cast, client: Client, used: Comparison
) -> None:
    runs, rows = Run.objects.count(), RunQuery.objects.count()
    client.force_login(cast.reviewer)
    for run in (used.run_a, used.run_b):
        response = client.post(delete_url(run))
        assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
        shown = page(client.get(response["Location"]))
        assert f"Run “{run.name}” cannot be deleted because these comparisons use it: “{used.name}”." in shown
    assert Run.objects.count() == runs and RunQuery.objects.count() == rows
    assert Comparison.objects.filter(pk=used.pk, run_a=used.run_a, run_b=used.run_b).exists()


def test_the_service_refuses_a_used_run_naming_every_comparison_that_uses_it(
    cast: Cast, used: Comparison
) -> None:
    c = make_run(cast.alpha, "丙", {"q1": "ABCDE"}, by=cast.reviewer)
    second = make_comparison(cast.alpha, used.pool_version, c, used.run_b, by=cast.reviewer, k=2)
    with pytest.raises(RunDeleteError) as refused:
        run_delete(run=used.run_b)
    assert str(refused.value) == (
        f"Run “乙” cannot be deleted because these comparisons use it: “{used.name}”, “{second.name}”."
    )
    assert Run.objects.filter(pk=used.run_b_id).exists()


def test_editors_get_403_and_the_run_stays(cast: Cast, client: Client) -> None:
    run = make_run(cast.alpha, "bm25", {"q1": ["A"]}, by=cast.reviewer)
    client.force_login(cast.editor)
    assert client.post(delete_url(run)).status_code == 403
    assert Run.objects.filter(pk=run.pk).exists() and RunQuery.objects.filter(run=run).exists()


def test_another_projects_run_is_not_found_through_my_project(cast: Cast, client: Client) -> None:
    theirs = make_run(cast.beta, "beta run", {"q1": ["A"]}, by=cast.outsider)
    client.force_login(cast.owner)
    target = reverse("run_delete", kwargs={"slug": "alpha", "run_id": theirs.pk})
    assert client.post(target).status_code == 404
    assert Run.objects.filter(pk=theirs.pk).exists()


def test_get_is_refused_with_405_and_deletes_nothing(cast: Cast, client: Client) -> None:
    run = make_run(cast.alpha, "bm25", {"q1": ["A"]}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    assert client.get(delete_url(run)).status_code == 405
    assert Run.objects.filter(pk=run.pk).exists()


def test_an_htmx_delete_redirects_the_whole_page(cast: Cast, client: Client, used: Comparison) -> None:
    unused = make_run(cast.alpha, "bm25", {"q1": ["A"]}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    deleted = client.post(delete_url(unused), headers={"HX-Request": "true"})
    assert deleted.status_code == 200
    assert deleted["HX-Redirect"] == reverse("run_list", kwargs={"slug": "alpha"})
    refused = client.post(delete_url(used.run_a), headers={"HX-Request": "true"})
    assert refused["HX-Redirect"] == used.run_a.get_absolute_url()
    assert Run.objects.filter(pk=used.run_a_id).exists()


def test_the_run_page_offers_a_confirmed_delete_only_for_an_unused_run(
    cast: Cast, client: Client, used: Comparison
) -> None:
    unused = make_run(cast.alpha, "bm25", {"q1": ["A"]}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    offered = page(client.get(unused.get_absolute_url()))
    # The form sits inside a <details>: the first click only opens it, the second submits.
    details = offered[offered.index("<details>") : offered.index("</details>")]
    assert f'<form method="post" action="{delete_url(unused)}"' in details
    assert 'name="csrfmiddlewaretoken"' in details
    assert "Delete run “bm25” for good?" in details and "Yes, delete this run" in details
    refused = page(client.get(used.run_a.get_absolute_url()))
    assert delete_url(used.run_a) not in refused
    assert "This run cannot be deleted while a comparison uses it" in refused


def postgres_only_test(test: Callable[..., None]) -> Callable[..., None]:
    for mark in postgres_only:
        test = mark(test)
    return test


@postgres_only_test
def test_a_run_deleted_while_a_comparison_is_created_on_it_never_leaves_a_comparison_without_it(
    cast: Cast,
) -> None:
    """Whichever commits first wins: the comparison (and the delete is refused), or the delete (and
    the comparison fails). The interleaving varies, so the race is staged a few times. Without the
    row lock in run_delete, the delete itself failed at commit with PostgreSQL's foreign-key error."""
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    a = make_run(cast.alpha, "甲", {"q1": "CADBE"}, by=cast.reviewer)
    for attempt in range(5):
        c = make_run(cast.alpha, f"丙 {attempt}", {"q1": "ABCDE"}, by=cast.reviewer)
        # Each side its own instance, as two requests would have: delete() sets its run's pk to None.
        to_compare, to_delete = Run.objects.get(pk=c.pk), Run.objects.get(pk=c.pk)
        created, deleted = at_once(
            lambda run=to_compare: comparison_create(
                project=cast.alpha,
                pool_version=version,
                run_a=a,
                run_b=run,
                settings=metrics.Settings(k=3),
                by=cast.reviewer,
            ),
            lambda run=to_delete: run_delete(run=run),
        )
        if isinstance(deleted, RunDeleteError):
            assert isinstance(created, Comparison), created
            assert Run.objects.filter(pk=c.pk).exists()
            assert Comparison.objects.filter(pk=created.pk, run_b=c).exists()
        else:
            assert deleted is None, deleted
            # A clear refusal for the person creating the comparison, not a database error (500).
            assert isinstance(created, ComparisonInputError), created
            assert "was deleted while this comparison was being computed" in str(created)
            assert not Run.objects.filter(pk=c.pk).exists()
            assert not RunQuery.objects.filter(run_id=c.pk).exists()
            assert not Comparison.objects.filter(run_b_id=c.pk).exists()
