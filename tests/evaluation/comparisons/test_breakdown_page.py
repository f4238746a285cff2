"""The comparison's query breakdown: the command shown as code, tied groups' mean gains explained,
no "only in" tags beside a refused run, and percentages without a space."""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.urls import reverse
from django.utils import translation

from evaluation import metrics
from evaluation.comparisons import comparison_breakdown
from evaluation.models import Comparison
from tests.conftest import Cast
from tests.factories import make_comparison, make_e9, make_pool, make_run

NDCG_PARTIAL = "evaluation/metrics/_ndcg.html"


def test_the_breakdown_summary_row_shows_the_command_as_code_without_backticks() -> None:
    with translation.override("en"):
        page = render_to_string(
            NDCG_PARTIAL + "#positions",
            {
                "rows": [],
                "caption": "A",
                "side": "A",
                "tail": {
                    "first": 201,
                    "last": 250,
                    "count": 50,
                    "documents": 50,
                    "added": 1.0,
                    "cumulative": 2.0,
                },
            },
        )
    assert "`" not in page
    assert "; <code>manage.py evaluate --breakdown</code> on the exported files lists every term." in page


MEAN_NOTE = "Tied documents share the mean gain of their tied group (tie policy “expected”)"


def test_a_tied_groups_mean_gain_is_marked_and_explained_under_the_table(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 1, "C": 2}}, by=cast.owner)
    tied = make_run(
        cast.alpha,
        "tied",
        text="q1 Q0 A 1 1.0 s\nq1 Q0 B 2 1.0 s\nq1 Q0 C 3 0.5 s\n",
        fmt="trec",
        by=cast.reviewer,
    )
    plain = make_run(cast.alpha, "plain", {"q1": "CAB"}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, tied, plain, by=cast.reviewer, k=3, ties="expected")
    client.force_login(cast.reviewer)
    response = client.get(_query_url(comparison))
    a, b = response.context["a"], response.context["b"]
    assert [item["mean_gain"] for item in a["rows"]] == [True, True, False] and a["mean_gain"]
    assert not any(item["mean_gain"] for item in b["rows"]) and not b["mean_gain"]
    page = response.content.decode()
    # Visible without hovering, and not by colour alone: a mark, words for screen readers, one note.
    assert page.count('<sup aria-hidden="true">*</sup>') == 2
    assert page.count("(the mean gain of its tied group)") == 2
    assert page.count(MEAN_NOTE) == 1
    assert "so a gain may differ from its grade’s." in page
    # Under another tie policy the gain is the document's own: no mark, no note.
    other = make_comparison(cast.alpha, version, tied, plain, by=cast.reviewer, k=3, ties="docid-desc")
    page = client.get(_query_url(other)).content.decode()
    assert MEAN_NOTE not in page and "(the mean gain of its tied group)" not in page


def _query_url(comparison: Comparison, **query: str) -> str:
    from urllib.parse import urlencode

    base = reverse(
        "comparison_query", kwargs={"slug": comparison.project.slug, "comparison_id": comparison.pk}
    )
    return base + "?" + urlencode({"query": "q1", **query})


def test_the_breakdown_shows_the_partial_of_each_metric_in_the_registry(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    comparison = make_e9(cast.alpha, owner=cast.owner, reviewer=cast.reviewer)
    client.force_login(cast.reviewer)
    response = client.get(_query_url(comparison))
    partials = response.context["metric_partials"]
    assert partials == [metric.partial for metric in metrics.METRICS] and partials[0] == NDCG_PARTIAL
    assert response.content.decode().count('data-testid="idcg"') == 1
    twice = (metrics.METRICS[0], dataclasses.replace(metrics.METRICS[0], name="again"))
    monkeypatch.setattr(metrics, "METRICS", twice)
    assert client.get(_query_url(comparison)).content.decode().count('data-testid="idcg"') == 2


def test_when_b_cannot_be_scored_no_document_of_a_is_called_only_in_a(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 2, "C": 1}}, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": ["A", "B", "C"]}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": ["A", "B", "X"]}, by=cast.reviewer)  # X: unjudged
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    breakdown = comparison_breakdown(comparison=comparison, query_id="q1", k=3)  # the what-if reaches X
    assert breakdown is not None and breakdown.a is not None and breakdown.b is None
    assert breakdown.only_in_a == frozenset() and breakdown.only_in_b == frozenset()
    client.force_login(cast.reviewer)
    page = _text(client.get(_query_url(comparison, k="3")).content.decode())
    assert "Not scored: see the error above." in page
    assert "only in A" not in page and "only in B" not in page
    # Both scored (X counted as gain 0): the tags are back, C in A's top 3 only, X in B's.
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=3, unjudged="zero")
    breakdown = comparison_breakdown(comparison=comparison, query_id="q1")
    assert breakdown is not None and breakdown.only_in_a == {"C"} and breakdown.only_in_b == {"X"}


@pytest.mark.parametrize(("language", "expected"), [("en", "61.1%"), ("zh-hans", "61.1%")])
def test_a_percentage_has_no_space_before_its_sign(language: str, expected: str) -> None:
    class Figure:
        value = 0.6111
        percent = 61.11
        note = ""

    with translation.override(language):
        page = render_to_string("annotator/disputes/_figure.html", {"f": Figure(), "percent": True})
    assert f'<span class="figure-value">{expected}</span>' in page


def _text(page: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))
