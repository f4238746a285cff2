"""A comparison stored in version 1 of the results shape (what every comparison stored before
version 2) opens, lists, exports and recomputes exactly as one stored in the current version."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db.models import QuerySet
from django.test import Client
from django.urls import reverse

from evaluation import metrics
from evaluation.comparisons import comparison_recompute, summary_of
from evaluation.exports import comparison_export
from evaluation.models import Comparison
from tests.conftest import Cast
from tests.evaluation.metrics.test_results import POOL, RUN_A, RUN_B, V1
from tests.factories import make_comparison, make_pool, make_run

SETTINGS = {"k": 3, "unjudged": "zero", "zero_idcg": "exclude", "extra_queries": "ignore"}
QUERIES = ("q1", "q2", "q3", "q4")


@pytest.fixture
def fresh(cast: Cast) -> Comparison:
    """RUN_A (甲) against RUN_B (乙) of test_results, computed and stored now."""
    version = make_pool(cast.alpha, POOL, by=cast.owner)
    a = make_run(cast.alpha, "甲", RUN_A, by=cast.reviewer)
    b = make_run(cast.alpha, "乙", RUN_B, by=cast.reviewer)
    return make_comparison(cast.alpha, version, a, b, by=cast.reviewer, **SETTINGS)


def store_as_version_1(comparison: Comparison) -> None:
    """Replace the stored results by the version 1 document of the same runs, with the summary
    and engine record that version stored beside it (under the models' refusal to change them)."""
    engine = {**comparison.engine, "results_version": 1}
    QuerySet.update(
        Comparison.objects.filter(pk=comparison.pk), results=V1, summary=summary_of(V1), engine=engine
    )


def pages(client: Client, comparison: Comparison) -> dict[str, str]:
    """Every page that shows the comparison's numbers, CSRF tokens (random per response) blanked."""
    kwargs = {"slug": comparison.project.slug, "comparison_id": comparison.pk}
    urls = [
        reverse("comparison_list", kwargs={"slug": comparison.project.slug}),
        comparison.get_absolute_url(),
        comparison.get_absolute_url() + "?show=regressions&sort=query",
        *(reverse("comparison_query", kwargs=kwargs) + f"?query={q}" for q in QUERIES),
        reverse("comparison_query", kwargs=kwargs) + "?query=q2&k=5&gain=exponential",
    ]
    shown = {}
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        page = response.content.decode()
        page = re.sub(r'(csrfmiddlewaretoken" value=|"x-csrftoken": )"[^"]*"', r'\1""', page)
        shown[url] = page
    return shown


def test_the_version_1_fixture_is_what_version_1_stored_for_these_runs(fresh: Comparison) -> None:
    assert fresh.results["version"] == metrics.RESULTS_VERSION == 2
    assert fresh.engine["results_version"] == 2
    assert metrics.Results.from_dict(fresh.results).to_dict(version=1) == V1


@pytest.mark.parametrize("version", [1, 2])
def test_the_pages_show_the_same_figures_whatever_version_was_stored(
    cast: Cast, client: Client, fresh: Comparison, version: int
) -> None:
    if version == 1:
        store_as_version_1(fresh)
    client.force_login(cast.reviewer)
    summary = client.get(fresh.get_absolute_url()).content.decode()
    for value in (0.3866640056613812, 0.8249983368716965, 0.5248827916050821, 0.7624413958025411):
        assert f'title="{value!r}"' in summary  # the means and micro figures of A and B
    assert f'data-testid="mean-delta"><span class="num" title="{0.4383343312103154!r}">+0.4383<' in summary
    assert "2 / 0 / 1" in summary and "(paired queries: 3)" in summary
    start = summary.index('data-testid="counts"')
    counts = summary[start : summary.index("</dl>", start)]
    assert re.findall(r"<dd>([^<]*)</dd>", counts) == ["4", "3", "1", "1", "1 / 0", "0 / 1", "1 / 1"]
    assert "Coverage warning:" in summary  # B's unjudged U in q2, scored as gain 0
    rows = re.findall(r'class="outcome-(\w+)">\s*<th scope="row"><a [^>]*>(\w+)</a>', summary)
    assert rows == [("regression", "q2"), ("improvement", "q1"), ("improvement", "q4"), ("excluded", "q3")]

    kwargs = {"slug": fresh.project.slug, "comparison_id": fresh.pk}
    page = client.get(reverse("comparison_query", kwargs=kwargs) + "?query=q2").content.decode()
    saved = page[page.index('class="card stored"') : page.index("</p>", page.index('class="card stored"'))]
    for value in (0.5525004989384911, 0.4749950106150897):
        assert f'title="{value!r}"' in saved  # the stored NDCG of A and B
    assert f'title="{-0.07750548832340137!r}">-0.0775<' in saved
    assert "1 of 4 by delta, largest regression first" in saved
    # The breakdown itself is scored from the pool and the runs: DCG of A over B, C at K = 3.
    assert f'data-testid="dcg-a"><span class="num" title="{2.6309297535714578!r}"' in page


def test_a_version_1_comparison_reads_exports_and_recomputes_as_a_fresh_one(
    cast: Cast, client: Client, fresh: Comparison
) -> None:
    client.force_login(cast.reviewer)
    shown = pages(client, fresh)
    exported = comparison_export(comparison=Comparison.objects.get(pk=fresh.pk))
    assert comparison_recompute(comparison=fresh) == []

    store_as_version_1(fresh)
    stored = Comparison.objects.get(pk=fresh.pk)
    assert stored.results == V1
    assert pages(client, stored) == shown
    assert comparison_export(comparison=stored) == exported  # the zip, byte for byte
    assert comparison_recompute(comparison=stored) == []  # recomputed in the stored version

    # A recomputation compares like with like: a changed number is named by its version 1 path.
    changed: dict[str, Any] = {**V1, "b": {**V1["b"], "dcg": [4.7618595071429155, 2.25, 0.0, 1.0]}}
    QuerySet.update(Comparison.objects.filter(pk=fresh.pk), results=changed)
    differences = comparison_recompute(comparison=Comparison.objects.get(pk=fresh.pk))
    assert differences == ["results.b.dcg[1]: stored 2.25, recomputed 2.261859507142915"]
