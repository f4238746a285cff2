"""Comparisons: created once under pinned settings, refused when inputs do not fit the pool,
shown as a summary, a per-query table and a worked breakdown, all with the engine's numbers."""

from __future__ import annotations

import copy
import hashlib
import html
import math
import random
import re

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.models import Document
from annotator.pools.models import PoolIntegrityError
from evaluation import metrics
from evaluation.comparisons import ComparisonInputError, ComparisonResults, comparison_breakdown
from evaluation.models import Comparison, ImmutableFieldError
from evaluation.runs import pool_query_grades
from tests.conftest import Cast
from tests.evaluation.comparisons.helpers import (
    E1_NDCG,
    E9_DCG,
    E9_IDCG,
    E9_NDCG,
    stored_column,
    stored_stats,
)
from tests.factories import E9_POOL, make_comparison, make_e9, make_pool, make_run


def url(name: str, comparison: Comparison, **query: str) -> str:
    base = reverse(name, kwargs={"slug": comparison.project.slug, "comparison_id": comparison.pk})
    if query:
        from urllib.parse import urlencode

        base += "?" + urlencode(query)
    return base


@pytest.fixture
def e9(cast: Cast) -> Comparison:
    return make_e9(cast.alpha, owner=cast.owner, reviewer=cast.reviewer)


# ---- Numbers ------------------------------------------------------------------------------------


def test_the_e9_comparison_stores_the_contracts_numbers_to_full_precision(e9: Comparison) -> None:
    comparison = Comparison.objects.get(pk=e9.pk)
    stored = comparison.results
    assert stored["version"] == metrics.RESULTS_VERSION == 2
    assert [s["label"] for s in stored["systems"]] == ["a", "b"]
    columns = [stored_column(comparison, "a", name) for name in ("dcg", "idcg", "ndcg")]
    assert columns == [[E9_DCG], [E9_IDCG], [E9_NDCG]]
    row = ComparisonResults(stored).row(0)
    assert (row.a_dcg, row.idcg, row.a_ndcg, row.b_ndcg) == (E9_DCG, E9_IDCG, E9_NDCG, 1.0)
    assert ComparisonResults(stored).stats.mean_delta == 1.0 - E9_NDCG


def test_the_summary_page_shows_means_delta_and_full_precision_on_hover(
    cast: Cast, client: Client, e9: Comparison
) -> None:
    client.force_login(cast.reviewer)
    page = client.get(e9.get_absolute_url()).content.decode()
    assert f'title="{E9_NDCG!r}">0.6075<' in page
    assert 'title="1.0">1.0000<' in page
    assert f'title="{1.0 - E9_NDCG!r}">+0.3925<' in page
    assert "1 / 0 / 0" in page  # wins / ties / losses
    assert "seed 0" in page
    assert "Micro: sum(DCG) / sum(IDCG)" in page


def test_the_breakdown_page_writes_out_the_dcg_arithmetic_of_e9(
    cast: Cast, client: Client, e9: Comparison
) -> None:
    client.force_login(cast.reviewer)
    page = client.get(url("comparison_query", e9, query="q1")).content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert "NDCG@3 = DCG / IDCG = 2.8928 / 4.7619 = 0.6075" in text
    assert "NDCG@3 = DCG / IDCG = 4.7619 / 4.7619 = 1.0000" in text
    assert "log₂(3) = 1.5850" in text
    for value in (E9_DCG, E9_IDCG, E9_NDCG):
        assert f'title="{value!r}"' in page
    # Running DCG of 甲 after C (1 / log2 2) and A (3 / log2 3); D adds 0, so it is also the DCG.
    assert 1.0 + 3.0 / math.log2(3) == E9_DCG
    assert page.count(f'title="{E9_DCG!r}"') >= 3  # running DCG at 2 and 3, the total, the division


def test_the_breakdown_marks_documents_in_only_one_list_and_shows_the_ideal(
    cast: Cast, client: Client, e9: Comparison
) -> None:
    client.force_login(cast.reviewer)
    page = client.get(url("comparison_query", e9, query="q1")).content.decode()
    assert "only in A" in page and "only in B" in page  # D in 甲's top 3, B in 乙's
    assert "Ideal ranking: the frozen pool's best 3 grades" in page
    assert f'data-testid="idcg"><span class="num" title="{E9_IDCG!r}">4.7619</span>' in page


def test_a_short_list_shows_its_empty_positions_contributing_zero(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 2, "C": 1, "D": 0}, "q2": {"E": 1}}, by=cast.owner)
    a = make_run(cast.alpha, "short", {"q1": ["B"], "q2": ["E"]}, by=cast.reviewer)
    # An empty list for q1 (a run with no document at all is refused, as an empty file is).
    b = make_run(cast.alpha, "empty", text="q1:\nq2: E\n", by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    breakdown = comparison_breakdown(comparison=comparison, query_id="q1")
    assert breakdown is not None and breakdown.a is not None and breakdown.b is not None
    assert [row.doc_id for row in breakdown.a.positions] == ["B", None]
    assert breakdown.a.positions[1].contribution == 0.0
    assert breakdown.b.ndcg == 0.0  # the contract's E4
    client.force_login(cast.reviewer)
    page = client.get(url("comparison_query", comparison, query="q1")).content.decode()
    assert page.count("empty position: the list is shorter than K") == 3


def test_a_what_if_far_beyond_the_lists_shows_their_empty_tail_as_one_row(cast: Cast, client: Client) -> None:
    """K=10,000 on short lists must not make a page of megabytes of identical empty rows."""
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 2, "C": 1}}, by=cast.owner)
    a = make_run(cast.alpha, "short", {"q1": ["B", "A"]}, by=cast.reviewer)
    b = make_run(cast.alpha, "shorter", {"q1": ["C"]}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    client.force_login(cast.reviewer)
    response = client.get(url("comparison_query", comparison, query="q1", k="10000"))
    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert len(page) < 100_000
    # Each list: its documents, three empty positions one by one, then one row for the rest.
    a_side, b_side = response.context["a"], response.context["b"]
    assert [item["row"].rank for item in a_side["rows"]] == [1, 2, 3, 4, 5]
    assert a_side["tail"] == metrics.Tail(
        first=6, last=10000, count=9995, documents=0, added=0.0, cumulative=a_side["result"].dcg
    )
    assert b_side["tail"].first == 5 and b_side["tail"].count == 9996
    assert len(b_side["bars"]) == 4
    assert page.count("empty position: the list is shorter than K") == 3 + 3
    assert "6–10000" in page and "9995 more empty positions: each contributes 0" in page
    assert "5–10000" in page and "9996 more empty positions" in page
    # The ideal comes from the pool (three grades), whatever K.
    assert len(response.context["ideal_rows"]) == 3
    # A list short by no more than three positions shows every one of them.
    response = client.get(url("comparison_query", comparison, query="q1", k="4"))
    assert response.context["b"]["tail"] is None
    assert len(response.context["b"]["rows"]) == 4


def test_a_what_if_over_long_lists_shows_the_first_positions_and_sums_the_rest(
    cast: Cast, client: Client
) -> None:
    """K=10,000 on 100,000-row runs must not make a page of megabytes that takes seconds."""
    from evaluation.views import ROWS_SHOWN

    rng = random.Random(7)
    docs = [f"D{i}" for i in range(ROWS_SHOWN + 100)]
    version = make_pool(cast.alpha, {"q1": {d: rng.randint(0, 3) for d in docs}}, by=cast.owner)
    a = make_run(cast.alpha, "forward", {"q1": docs}, by=cast.reviewer)
    b = make_run(cast.alpha, "backward", {"q1": docs[::-1]}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    client.force_login(cast.reviewer)
    response = client.get(url("comparison_query", comparison, query="q1", k=str(len(docs))))
    page = html.unescape(response.content.decode())
    for side in (response.context["a"], response.context["b"]):
        positions = side["result"].positions
        assert [item["row"] for item in side["rows"]] == list(positions[:ROWS_SHOWN])
        assert len(side["bars"]) == ROWS_SHOWN
        tail = side["tail"]
        assert (tail.first, tail.last, tail.count, tail.documents) == (
            ROWS_SHOWN + 1, len(docs), 100, 100
        )  # fmt: skip
        assert tail.cumulative == side["result"].dcg
        assert math.isclose(tail.added, math.fsum(row.contribution for row in positions[ROWS_SHOWN:]))
    assert len(response.context["ideal_rows"]) == ROWS_SHOWN
    assert response.context["ideal_tail"].cumulative == response.context["idcg"]
    assert page.count("100 more positions (100 with a document) add ") == 3
    assert "manage.py evaluate --breakdown" in page
    # One position past the limit is shown as a row, not summed as "201–201".
    response = client.get(url("comparison_query", comparison, query="q1", k=str(ROWS_SHOWN + 1)))
    assert len(response.context["a"]["rows"]) == ROWS_SHOWN + 1 and response.context["a"]["tail"] is None


def test_the_seed_000_contrast_is_labelled_and_is_not_the_ndcg(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, {"q2": {"J-A": 3, "J-B": 2, "J-C": 1, "J-D": 0}}, by=cast.owner)
    a = make_run(cast.alpha, "BC", {"q2": ["J-B", "J-C"]}, by=cast.reviewer)
    b = make_run(cast.alpha, "AB", {"q2": ["J-A", "J-B"]}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    client.force_login(cast.reviewer)
    page = client.get(url("comparison_query", comparison, query="q2")).content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert f'title="{E1_NDCG!r}">0.6173<' in page
    assert (
        "contrast, not the NDCG If the ideal came only from this list's candidates: 1.0000"
        in html.unescape(text)
    )


def test_what_if_k_and_gain_rescore_the_query_without_changing_the_saved_comparison(
    cast: Cast, client: Client, e9: Comparison
) -> None:
    before = Comparison.objects.get(pk=e9.pk).results
    client.force_login(cast.reviewer)
    response = client.get(
        url("comparison_query", e9, query="q1", k="2", gain="exponential"), headers={"HX-Request": "true"}
    )
    fragment = response.content.decode()
    assert response.status_code == 200 and "<html" not in fragment and 'id="breakdown"' in fragment
    assert "What-if:" in fragment and "K = 2" in fragment and "exponential" in fragment
    expected = metrics.score_query(list("CADBE"), E9_POOL["q1"], metrics.Settings(k=2, gain="exponential"))
    assert f'title="{expected.ndcg!r}"' in fragment
    saved = Comparison.objects.get(pk=e9.pk)
    assert saved.results == before and saved.k == 3 and saved.gain == "linear"


def test_the_previous_and_next_query_links_carry_a_what_if_and_follow_a_re_score(
    cast: Cast, client: Client
) -> None:
    """After a what-if, "next" keeps its K and gain, not the saved ones."""
    comparison = build_comparison_of_size(cast, 3, "w")
    client.force_login(cast.reviewer)
    links = re.compile(r'<a href="\?([^"]+)" rel="(?:prev|next)"')

    def nav(**params: str) -> list[str]:
        page = client.get(url("comparison_query", comparison, **params)).content.decode()
        return [html.unescape(link) for link in links.findall(page)]

    saved = nav(query="w2")
    assert saved and all(link.startswith("query=") and "&" not in link for link in saved)
    assert all(link.endswith("&k=2&gain=exponential") for link in nav(query="w2", k="2", gain="exponential"))
    # The htmx re-score swaps the links along with the breakdown.
    fragment = client.get(
        url("comparison_query", comparison, query="w2", k="2", gain="exponential"),
        headers={"HX-Request": "true"},
    ).content.decode()
    assert '<nav id="query-nav" class="query-nav"' in fragment and 'hx-swap-oob="true"' in fragment
    assert [html.unescape(link) for link in links.findall(fragment)] == nav(
        query="w2", k="2", gain="exponential"
    )
    # Back at the saved settings (or an invalid what-if, which shows them), the links carry nothing.
    assert nav(query="w2", k=str(comparison.k), gain=comparison.gain) == saved
    assert nav(query="w2", k="0") == saved


@pytest.mark.parametrize(
    ("typed", "kept"), [(" 7 ", 7), ("\uff17", None), ("\u0667", None), ("7.0", None), ("-1", None)]
)
def test_k_and_seed_fields_take_the_digits_0_to_9_only(typed: str, kept: int | None) -> None:
    from django import forms

    from annotator.projects.forms import DigitsIntegerField

    field = DigitsIntegerField(min_value=1)
    if kept is None:
        with pytest.raises(forms.ValidationError):
            field.clean(typed)
    else:
        assert field.clean(typed) == kept


def test_an_invalid_what_if_keeps_the_saved_settings_and_says_why(
    cast: Cast, client: Client, e9: Comparison
) -> None:
    client.force_login(cast.reviewer)
    response = client.get(url("comparison_query", e9, query="q1", k="0"))
    page = response.content.decode()
    assert response.status_code == 200
    assert "The what-if values were not valid" in page
    assert "What-if:" not in page
    assert f'title="{E9_NDCG!r}"' in page


def test_a_what_if_that_reaches_an_unjudged_id_shows_the_engines_error(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 2}}, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": ["A", "B", "X"]}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": ["B", "A"]}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    client.force_login(cast.reviewer)
    page = html.unescape(client.get(url("comparison_query", comparison, query="q1", k="3")).content.decode())
    assert "This query cannot be scored under these settings" in page
    assert "run “a”" in page and "line 1" in page and "“X”" in page
    # Both runs refused: both are named, not only the last one.
    c = make_run(cast.alpha, "c", {"q1": ["B", "A", "Y"]}, by=cast.reviewer)
    both = make_comparison(cast.alpha, version, a, c, by=cast.reviewer, k=2)
    page = html.unescape(client.get(url("comparison_query", both, query="q1", k="3")).content.decode())
    assert "run “a”" in page and "“X”" in page and "run “c”" in page and "“Y”" in page
    # Each on its own line, and the pool's ideal rows still shown, not "No judged document for
    # this query" for a pool with two judged documents.
    assert page.count("This query cannot be scored under these settings") == 2
    assert "No judged document for this query" not in page
    idcg = 3 / 1 + 2 / math.log2(3)
    assert f'data-testid="idcg"><span class="num" title="{idcg!r}">{idcg:.4f}</span>' in page
    bars = client.get(url("comparison_query", both, query="q1", k="3")).context["ideal_bars"]
    assert [bar["width"] for bar in bars] == [90.0, round(90 * (2 / math.log2(3)) / 3, 2)]  # drawn to scale


def test_the_breakdown_without_a_query_opens_the_worst_one(cast: Cast, client: Client) -> None:
    pool = {"q1": {"A": 3, "B": 1}, "q2": {"A": 3, "B": 1}, "q3": {"A": 3, "B": 1}}
    version = make_pool(cast.alpha, pool, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": "AB", "q2": "AB", "q3": "BA"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "AB", "q2": "BA", "q3": "AB"}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    client.force_login(cast.reviewer)
    response = client.get(url("comparison_query", comparison))
    assert response.status_code == 302
    assert response["Location"].endswith("?query=q2")


def test_an_unknown_query_gets_a_clear_not_found_page(cast: Cast, client: Client, e9: Comparison) -> None:
    client.force_login(cast.reviewer)
    response = client.get(url("comparison_query", e9, query="nope"))
    assert response.status_code == 404
    assert "is not in pool version" in html.unescape(response.content.decode())


def test_document_titles_link_to_their_pages(cast: Cast, client: Client, e9: Comparison) -> None:
    document, _ = Document.upsert(
        project=cast.alpha, external_id="C", title="Filling in the phone number", body="…"
    )
    Document.upsert(project=cast.beta, external_id="A", title="Beta's secret title", body="…")
    client.force_login(cast.reviewer)
    page = client.get(url("comparison_query", e9, query="q1")).content.decode()
    detail = reverse("document_detail", kwargs={"slug": "alpha", "document_id": document.pk})
    assert f'<a href="{detail}">Filling in the phone number</a>' in page
    assert "Beta&#x27;s secret title" not in page and "Beta's secret title" not in page


# ---- Validation at creation ---------------------------------------------------------------------


def test_with_no_paired_query_every_statistic_says_not_defined(cast: Cast, client: Client) -> None:
    """Every grade 0 and zero-IDCG queries excluded: nothing is paired. The randomization line says
    not defined, as the others do, not "p = — (0 random sign flips, …)"."""
    version = make_pool(cast.alpha, {"q1": {"A": 0, "B": 0}}, by=cast.owner)
    run_a = make_run(cast.alpha, "a", {"q1": "AB"}, by=cast.reviewer)
    run_b = make_run(cast.alpha, "b", {"q1": "BA"}, by=cast.reviewer)
    comparison = make_comparison(
        cast.alpha, version, run_a, run_b, by=cast.reviewer, k=2, zero_idcg="exclude"
    )
    client.force_login(cast.reviewer)
    page = client.get(comparison.get_absolute_url()).content.decode()
    assert "not defined (no paired queries)" in page and "random sign flips" not in page
    assert "not defined for fewer than two paired queries" in page


def test_an_interval_of_equal_deltas_is_not_called_bca(cast: Cast, client: Client) -> None:
    """With every paired delta equal no BCa interval is computed (every resample mean is that
    delta), so the page must not say "[+0.0000, +0.0000] (BCa, ...)"."""
    version = make_pool(cast.alpha, {"q1": {"A": 3, "B": 1}, "q2": {"A": 2, "B": 0}}, by=cast.owner)
    run_a = make_run(cast.alpha, "a", {"q1": "AB", "q2": "AB"}, by=cast.reviewer)
    run_b = make_run(cast.alpha, "b", {"q1": "AB", "q2": "AB"}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, run_a, run_b, by=cast.reviewer, k=2)
    assert stored_stats(comparison)["delta_ci95"] == [0.0, 0.0]
    client.force_login(cast.reviewer)
    page = client.get(comparison.get_absolute_url()).content.decode()
    assert "every paired delta is" in page and "BCa" not in page


def test_a_run_compared_with_itself_is_refused(cast: Cast) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    run = make_run(cast.alpha, "a", {"q1": "AB"}, by=cast.reviewer)
    with pytest.raises(ComparisonInputError, match="two different runs"):
        make_comparison(cast.alpha, version, run, run, by=cast.reviewer, k=3)


def test_an_unnamed_comparison_of_two_long_run_names_gets_a_name_that_fits(cast: Cast) -> None:
    """The default "A vs B" of two 200-character names was 404 characters: a 500 on PostgreSQL
    (value too long), silently stored on SQLite."""
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    run_a = make_run(cast.alpha, "X" * 200, {"q1": "AB"}, by=cast.reviewer)
    run_b = make_run(cast.alpha, "Y" * 200, {"q1": "BA"}, by=cast.reviewer)
    comparison = make_comparison(cast.alpha, version, run_a, run_b, by=cast.reviewer, k=3)
    comparison.refresh_from_db()
    assert len(comparison.name) <= Comparison._meta.get_field("name").max_length
    assert re.fullmatch(r"X{90,}… vs Y{90,}…", comparison.name), comparison.name
    fits = make_run(cast.alpha, "bm25", {"q1": "AB"}, by=cast.reviewer)
    assert make_comparison(cast.alpha, version, fits, run_b, by=cast.reviewer, k=3).name.startswith(
        "bm25 vs YYY"
    )


def test_a_pool_version_or_run_of_another_project_is_refused(cast: Cast) -> None:
    alpha_version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    beta_version = make_pool(cast.beta, E9_POOL, by=cast.outsider)
    a = make_run(cast.alpha, "a", {"q1": "AB"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "BA"}, by=cast.reviewer)
    beta_run = make_run(cast.beta, "b", {"q1": "BA"}, by=cast.outsider)
    with pytest.raises(ComparisonInputError, match="another project") as error:
        make_comparison(cast.alpha, beta_version, a, b, by=cast.reviewer, k=3)
    assert error.value.field == "pool_version"
    with pytest.raises(ComparisonInputError, match="another project") as error:
        make_comparison(cast.alpha, alpha_version, a, beta_run, by=cast.reviewer, k=3)
    assert error.value.field == "run_b"


@pytest.mark.parametrize(
    ("rankings_b", "policies", "expected"),
    [
        ({"q1": "ABX"}, {}, ["Run B", "run “b”", "line 1", "“X”", "unjudged"]),
        ({"q1": "AB", "q7": "A"}, {}, ["Run B", "“q7”", "not in the pool", "line 2"]),
        ({"q2": "A"}, {"missing_queries": "error", "extra_queries": "ignore"}, ["Run B", "“q1”", "missing"]),
    ],
)
def test_inputs_that_break_a_strict_policy_are_refused_naming_run_line_and_value(
    cast: Cast, rankings_b: dict[str, str], policies: dict[str, str], expected: list[str]
) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": "ABC"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", rankings_b, by=cast.reviewer)
    with pytest.raises(ComparisonInputError) as error:
        make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=3, **policies)
    for part in expected:
        assert part in str(error.value)
    assert error.value.field == "run_b"
    assert not Comparison.objects.exists()


def test_tied_scores_are_refused_under_error_and_scored_under_a_declared_tie_policy(cast: Cast) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    tied = make_run(
        cast.alpha, "tied", text="q1 Q0 B 1 1.0 s\nq1 Q0 A 2 1.0 s\n", fmt="trec", by=cast.reviewer
    )
    other = make_run(cast.alpha, "other", {"q1": "AB"}, by=cast.reviewer)
    with pytest.raises(
        ComparisonInputError, match="share the score 1.0.*lines 2, 1|share the score 1.0.*lines 1, 2"
    ):
        make_comparison(cast.alpha, version, tied, other, by=cast.reviewer, k=2)
    comparison = make_comparison(cast.alpha, version, tied, other, by=cast.reviewer, k=2, ties="docid-desc")
    # trec_eval's rule puts B before A: DCG = 2 + 3 / log2(3).
    expected = metrics.score_query(["B", "A"], E9_POOL["q1"], metrics.Settings(k=2))
    assert stored_column(comparison, "a") == [expected.ndcg]


def test_the_creation_form_refuses_bad_settings_with_specific_errors(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": "AB"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "BA"}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    base = {
        "pool_version": version.pk,
        "run_a": a.pk,
        "run_b": b.pk,
        "k": 3,
        "gain": "linear",
        "unjudged": "error",
        "zero_idcg": "zero",
        "ties": "error",
        "missing_queries": "zero",
        "extra_queries": "error",
        "seed": 0,
    }
    for field, value in [
        ("k", "0"),
        ("k", "True"),
        ("k", "1.5"),
        ("gain", "cubic"),
        ("seed", "-1"),
        ("unjudged", "ignore"),
        ("run_b", str(a.pk)),
        # The command line's rule: `evaluate --k ３` exits 2, so the form refuses it too.
        ("k", "\uff13"),
        ("k", "3.0"),
        ("seed", "\u0663"),
    ]:
        response = client.post(reverse("comparison_create", kwargs={"slug": "alpha"}), {**base, field: value})
        assert response.status_code == 200, (field, value)
        assert 'class="errorlist' in response.content.decode(), (field, value)
    assert not Comparison.objects.exists()
    page = html.unescape(
        client.post(
            reverse("comparison_create", kwargs={"slug": "alpha"}), {**base, "k": "\uff13"}
        ).content.decode()
    )
    assert "“\uff13” is not a whole number written with the digits 0-9." in page


def test_when_both_runs_break_a_policy_the_form_names_each_under_its_own_run(
    cast: Cast, client: Client
) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": "AXB"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "BAY"}, by=cast.reviewer)
    with pytest.raises(ComparisonInputError) as error:
        make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=3)
    assert [field for field, _message in error.value.problems] == ["run_a", "run_b"]
    assert "“X”" in error.value.problems[0][1] and "“Y”" in error.value.problems[1][1]
    client.force_login(cast.reviewer)
    form = {"pool_version": version.pk, "run_a": a.pk, "run_b": b.pk, "k": 3, "gain": "linear"}
    form |= {"unjudged": "error", "zero_idcg": "zero", "ties": "error", "seed": 0}
    form |= {"missing_queries": "zero", "extra_queries": "error"}
    response = client.post(reverse("comparison_create", kwargs={"slug": "alpha"}), form)
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert "“X”" in errors["run_a"][0] and "“Y”" not in errors["run_a"][0]
    assert "“Y”" in errors["run_b"][0] and "“X”" not in errors["run_b"][0]
    assert not Comparison.objects.exists()


def test_settings_and_results_never_change_after_creation(e9: Comparison) -> None:
    comparison = Comparison.objects.get(pk=e9.pk)
    comparison.k = 5
    with pytest.raises(ImmutableFieldError, match="k"):
        comparison.save()
    with pytest.raises(ImmutableFieldError):
        Comparison.objects.filter(pk=e9.pk).update(gain="exponential")
    with pytest.raises(ImmutableFieldError):
        Comparison.objects.filter(pk=e9.pk).update(results={})
    fresh = Comparison.objects.get(pk=e9.pk)
    fresh.notes = "a note may change"
    fresh.save()
    assert Comparison.objects.get(pk=e9.pk).k == 3


def test_runs_scored_under_different_settings_are_never_compared() -> None:
    pool = metrics.Pool(E9_POOL)
    a = metrics.evaluate_run(pool, {"q1": list("CADBE")}, metrics.Settings(k=3))
    b = metrics.evaluate_run(pool, {"q1": list("ABCDE")}, metrics.Settings(k=3, gain="exponential"))
    with pytest.raises(metrics.EvaluationError, match="different settings"):
        metrics.compare_results(a, b)


# ---- Policies and counts ------------------------------------------------------------------------


@pytest.fixture
def lenient(cast: Cast) -> Comparison:
    """Unjudged IDs scored 0, a zero-IDCG query excluded, a query missing from A, an extra one in B."""
    pool = {"q1": {"A": 3, "B": 1}, "q2": {"A": 2, "C": 0}, "q3": {"Z": 0}}
    version = make_pool(cast.alpha, pool, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": ["X", "A"], "q3": ["Z"]}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": ["A", "Y"], "q2": ["A"], "q3": ["Z"], "q9": ["A"]}, by=cast.reviewer)
    return make_comparison(
        cast.alpha,
        version,
        a,
        b,
        by=cast.reviewer,
        k=2,
        unjudged="zero",
        zero_idcg="exclude",
        extra_queries="ignore",
    )


def test_policy_counts_appear_on_the_summary_with_a_coverage_warning(
    cast: Cast, client: Client, lenient: Comparison
) -> None:
    client.force_login(cast.reviewer)
    page = client.get(lenient.get_absolute_url()).content.decode()
    counts = page[
        page.index('data-testid="counts"') : page.index("</dl>", page.index('data-testid="counts"'))
    ]
    facts = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]+)</dd>", counts))
    assert facts["Queries in the pool"] == "3"
    assert facts["Evaluated (in the mean)"] == "2"
    assert facts["Zero IDCG (no grade above 0)"] == "1"
    assert facts["Excluded from the mean"] == "1"
    assert facts["Missing from run A / run B"] == "1 / 0"
    assert facts["Unjudged IDs in the top K of A / B"] == "1 / 1"
    assert facts["Run queries not in the pool, skipped (A / B)"] == "0 / 1"
    assert "Coverage warning:" in page
    assert "zero: a ranked ID without a grade scores 0 (and is counted)" in page
    assert "exclude: such a query is left out of the mean (and counted)" in page


def test_a_zero_idcg_query_reads_as_one_sentence_in_each_language(
    cast: Cast, client: Client, lenient: Comparison
) -> None:
    """The formula and its verdict are one message, so zh-Hans punctuates it (it kept ": ")."""
    from django.conf import settings

    client.force_login(cast.reviewer)
    page = html.unescape(client.get(url("comparison_query", lenient, query="q3")).content.decode())
    text = re.sub(r"<[^>]+>", "", page)
    assert "NDCG@2 = DCG / IDCG = 0.0000 / 0.0000: zero IDCG, so the query is excluded from the mean" in text
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    zh = re.sub(
        r"<[^>]+>",
        "",
        html.unescape(client.get(url("comparison_query", lenient, query="q3")).content.decode()),
    )
    assert "0.0000 / 0.0000：IDCG 为零" in zh and "0.0000: " not in zh


def test_no_coverage_warning_when_every_ranked_id_is_judged(
    cast: Cast, client: Client, e9: Comparison
) -> None:
    client.force_login(cast.reviewer)
    assert "Coverage warning:" not in client.get(e9.get_absolute_url()).content.decode()


def test_stored_counts_and_means_are_the_engines(lenient: Comparison) -> None:
    pool = metrics.Pool({"q1": {"A": 3, "B": 1}, "q2": {"A": 2, "C": 0}, "q3": {"Z": 0}})
    settings = metrics.Settings(k=2, unjudged="zero", zero_idcg="exclude", extra_queries="ignore")
    expected = metrics.compare_runs(pool, lenient.run_a.engine_run(), lenient.run_b.engine_run(), settings)
    a, b = (next(s for s in lenient.results["systems"] if s["label"] == label) for label in "ab")
    assert a["metrics"]["ndcg"]["aggregates"]["mean"] == expected.a.mean
    assert b["metrics"]["ndcg"]["aggregates"]["micro"] == expected.b.micro
    assert a["counts"]["missing_from_run"] == expected.a.counts.missing_from_run == 1
    stats = stored_stats(lenient)
    assert stats["randomization_p"] == expected.randomization_p
    assert stats["delta"] == [None if np.isnan(d) else d for d in expected.delta.tolist()]


# ---- The per-query table ------------------------------------------------------------------------


@pytest.fixture
def many(cast: Cast) -> Comparison:
    """60 queries with every outcome: regressions, improvements and ties."""
    rng = random.Random(7)
    pool, ranks_a, ranks_b = {}, {}, {}
    for i in range(60):
        q = f"q{i:02d}"
        docs = [f"d{i}-{j}" for j in range(6)]
        pool[q] = {d: rng.randint(0, 3) for d in docs}
        pool[q][docs[0]] = 3
        ranks_a[q] = rng.sample(docs, 4)
        ranks_b[q] = ranks_a[q] if i % 5 == 0 else rng.sample(docs, 4)
    version = make_pool(cast.alpha, pool, by=cast.owner, name="Sixty")
    a = make_run(cast.alpha, "a60", ranks_a, by=cast.reviewer)
    b = make_run(cast.alpha, "b60", ranks_b, by=cast.reviewer)
    return make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=3, seed=11)


def table_rows(page: str) -> list[tuple[str, str]]:
    """(query ID, full-precision delta) of each row of the per-query table."""
    table = page[page.index('id="query-table"') :]
    return re.findall(
        r'\?query=(q\d+)">q\d+</a></th>.*?<td class="num delta">(?:<span class="num" title="([^"]+)")?',
        table,
        re.S,
    )


def test_the_table_lists_the_largest_regression_first_and_paginates(
    cast: Cast, client: Client, many: Comparison
) -> None:
    client.force_login(cast.reviewer)
    page = client.get(many.get_absolute_url()).content.decode()
    rows = table_rows(page)
    assert len(rows) == 50  # one page
    deltas = [float(d) for _q, d in rows]
    assert deltas == sorted(deltas)
    stored = stored_stats(many)["delta"]
    assert deltas[0] == min(stored)
    second = client.get(many.get_absolute_url() + "?page=2").content.decode()
    assert len(table_rows(second)) == 10
    assert "Page 2 of 2" in second


@pytest.mark.parametrize(
    ("show", "test"),
    [("regressions", lambda d: d < 0), ("improvements", lambda d: d > 0), ("ties", lambda d: d == 0)],
)
def test_the_table_filters_by_outcome(
    cast: Cast, client: Client, many: Comparison, show: str, test: object
) -> None:
    client.force_login(cast.reviewer)
    response = client.get(
        many.get_absolute_url() + f"?show={show}&sort=query", headers={"HX-Request": "true"}
    )
    fragment = response.content.decode()
    assert "<html" not in fragment
    rows = table_rows(fragment)
    deltas = stored_stats(many)["delta"]
    expected = [q for q, d in zip(many.results["query_ids"], deltas, strict=True) if test(d)]  # type: ignore[operator]
    assert [q for q, _ in rows] == expected[:50]
    assert expected  # the fixture has every outcome


def test_the_table_searches_query_ids(cast: Cast, client: Client, many: Comparison) -> None:
    client.force_login(cast.reviewer)
    fragment = client.get(
        many.get_absolute_url() + "?search=Q1", headers={"HX-Request": "true"}
    ).content.decode()
    assert sorted(q for q, _ in table_rows(fragment)) == [f"q1{i}" for i in range(10)]


def test_bad_table_parameters_fall_back_to_the_defaults(cast: Cast, client: Client, many: Comparison) -> None:
    client.force_login(cast.reviewer)
    response = client.get(many.get_absolute_url() + "?show=everything&sort=random&page=zzz")
    assert response.status_code == 200
    assert len(table_rows(response.content.decode())) == 50


def test_the_summary_draws_the_sorted_deltas_as_an_svg(cast: Cast, client: Client, many: Comparison) -> None:
    client.force_login(cast.reviewer)
    page = client.get(many.get_absolute_url()).content.decode()
    chart = page[page.index('<figure class="delta-chart">') : page.index("</figure>")]
    assert chart.count("<rect ") == 60
    titles = [float(t) for t in re.findall(r"<title>([-0-9.e]+)</title>", chart)]
    stats = stored_stats(many)
    assert titles == sorted(d for d in stats["delta"] if d is not None)
    assert chart.count('class="bar-down"') == stats["losses"]


# ---- Constant query counts ----------------------------------------------------------------------


def build_comparison_of_size(cast: Cast, n: int, tag: str) -> Comparison:
    pool = {f"{tag}{i}": {"A": 3, "B": 2, "C": 1} for i in range(n)}
    version = make_pool(cast.alpha, pool, by=cast.owner, name=f"size {n}")
    a = make_run(cast.alpha, f"a{n}", {q: "ABC" for q in pool}, by=cast.reviewer)
    b = make_run(cast.alpha, f"b{n}", {q: "CBA" for q in pool}, by=cast.reviewer)
    return make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=3)


@pytest.mark.parametrize("size", [3, 400])
def test_comparison_pages_issue_a_constant_number_of_queries_whatever_the_pool_size(
    cast: Cast, client: Client, django_assert_num_queries: object, size: int
) -> None:
    comparison = build_comparison_of_size(cast, size, "q")
    client.force_login(cast.reviewer)
    # Summary and per-query table: session, user, membership + project, the comparison with its
    # pool version and runs, the pool's canonical text (hash re-check).
    with django_assert_num_queries(5):  # type: ignore[operator]
        assert client.get(comparison.get_absolute_url()).status_code == 200
    with django_assert_num_queries(5):  # type: ignore[operator]
        assert (
            client.get(
                comparison.get_absolute_url() + "?show=regressions&page=2", headers={"HX-Request": "true"}
            ).status_code
            == 200
        )
    # Breakdown: the same five, both runs' parsed columns, the query's text, the documents' titles.
    with django_assert_num_queries(8):  # type: ignore[operator]
        assert client.get(url("comparison_query", comparison, query="q1")).status_code == 200


def test_pool_size_does_not_change_the_count_of_queries_of_any_comparison_page(
    cast: Cast, client: Client
) -> None:
    small, large = build_comparison_of_size(cast, 2, "s"), build_comparison_of_size(cast, 300, "l")
    client.force_login(cast.reviewer)
    counts = []
    for comparison, query in ((small, "s1"), (large, "l1")):
        with CaptureQueriesContext(connection) as captured:
            client.get(comparison.get_absolute_url())
            client.get(url("comparison_query", comparison, query=query))
            client.get(reverse("comparison_list", kwargs={"slug": "alpha"}))
        counts.append(len(captured))
    assert counts[0] == counts[1]


# ---- Integrity and recomputation ----------------------------------------------------------------


def test_a_pool_failing_its_hash_check_shows_a_loud_error_and_no_number(
    cast: Cast, client: Client, e9: Comparison, monkeypatch: pytest.MonkeyPatch
) -> None:
    from annotator.models import PoolVersion

    def tampered(self: PoolVersion) -> None:
        raise PoolIntegrityError(f"{self}: stored judgments do not match SHA-256 {self.sha256[:12]}…")

    monkeypatch.setattr(PoolVersion, "verify", tampered)
    client.force_login(cast.reviewer)
    for target in (
        e9.get_absolute_url(),
        url("comparison_query", e9, query="q1"),
        url("comparison_export", e9),
    ):
        response = client.get(target)
        page = response.content.decode()
        assert response.status_code == 409, target
        assert "failed its integrity check" in page
        assert "0.6075" not in page and "1.0000" not in page
    assert client.post(url("comparison_verify", e9)).status_code == 409
    with pytest.raises(PoolIntegrityError):
        pool_query_grades(PoolVersion.objects.get(pk=e9.pool_version_id), "q1")


def test_recomputing_reproduces_every_stored_number_to_the_last_digit(
    cast: Cast, client: Client, many: Comparison
) -> None:
    client.force_login(cast.owner)
    response = client.post(url("comparison_verify", many), follow=True)
    assert "identical to the last digit" in response.content.decode()
    fragment = client.post(url("comparison_verify", many), headers={"HX-Request": "true"}).content.decode()
    assert (
        "<html" not in fragment
        and 'id="verify-result"' in fragment
        and "identical to the last digit" in fragment
    )


def test_recomputing_says_so_when_stored_numbers_differ(cast: Cast, client: Client, e9: Comparison) -> None:
    # Only a corrupted database can do this: the model refuses the change, so go under it.
    results = copy.deepcopy(e9.results)
    results["systems"][0]["metrics"]["ndcg"]["per_query"]["ndcg"] = [0.5]
    from django.db.models import QuerySet

    QuerySet.update(Comparison.objects.filter(pk=e9.pk), results=results)
    client.force_login(cast.reviewer)
    page = html.unescape(client.post(url("comparison_verify", e9), follow=True).content.decode())
    assert "did NOT reproduce" in page and "results.systems[0].metrics.ndcg.per_query.ndcg[0]" in page


def test_recompute_and_check_also_compares_the_pools_stored_rows(
    cast: Cast, client: Client, e9: Comparison
) -> None:
    """A stored judgment row changed under the hashed text: the scores come from the hashed text
    only, so "Recompute and check" compares the rows too and does not say all is well."""
    from annotator.models import PoolJudgment
    from tests.annotator.pools.test_immutability import tamper

    row = PoolJudgment.objects.filter(version=e9.pool_version).order_by("query_id", "doc_id").first()
    assert row is not None
    # Only a corrupted database can do this: the model and a PostgreSQL trigger refuse it.
    tamper("UPDATE annotator_pooljudgment SET grade = %s WHERE id = %s", [(row.grade + 1) % 4, row.pk])
    client.force_login(cast.reviewer)
    page = html.unescape(client.post(url("comparison_verify", e9), follow=True).content.decode())
    assert f"failed its integrity check: Stored row ({row.query_id}, {row.doc_id}) has grade" in page
    assert "identical to the last digit" not in page


def test_verify_refuses_get_and_editors(cast: Cast, client: Client, e9: Comparison) -> None:
    client.force_login(cast.reviewer)
    # A GET recomputes nothing: it goes to the comparison's page (annotator.web.http.post_from).
    assert client.get(url("comparison_verify", e9))["Location"] == e9.get_absolute_url()
    client.force_login(cast.editor)
    assert client.post(url("comparison_verify", e9)).status_code == 403


# ---- Creation through the page ------------------------------------------------------------------


def creation_data(version_pk: int, a_pk: int, b_pk: int, **overrides: object) -> dict[str, object]:
    return {
        "pool_version": version_pk,
        "run_a": a_pk,
        "run_b": b_pk,
        "k": 3,
        "gain": "linear",
        "unjudged": "error",
        "zero_idcg": "zero",
        "ties": "error",
        "missing_queries": "zero",
        "extra_queries": "error",
        "seed": 0,
        "name": "",
        "notes": "",
        **overrides,
    }


def test_a_reviewer_creates_a_comparison_and_lands_on_its_permalink(cast: Cast, client: Client) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    a = make_run(cast.alpha, "甲", {"q1": "CADBE"}, by=cast.reviewer)
    b = make_run(cast.alpha, "乙", {"q1": "ABCDE"}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    response = client.post(
        reverse("comparison_create", kwargs={"slug": "alpha"}), creation_data(version.pk, a.pk, b.pk)
    )
    comparison = Comparison.objects.get()
    assert response.status_code == 302 and response["Location"] == comparison.get_absolute_url()
    assert comparison.name == "甲 vs 乙" and comparison.created_by == cast.reviewer
    assert comparison.pool_sha256 == version.sha256
    assert stored_column(comparison, "a") == [E9_NDCG]


def test_creation_by_htmx_redirects_the_page_and_errors_stay_in_the_fragment(
    cast: Cast, client: Client
) -> None:
    version = make_pool(cast.alpha, E9_POOL, by=cast.owner)
    a = make_run(cast.alpha, "a", {"q1": "CADBE"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "ABX"}, by=cast.reviewer)
    c = make_run(cast.alpha, "c", {"q1": "ABCDE"}, by=cast.reviewer)
    client.force_login(cast.owner)
    target = reverse("comparison_create", kwargs={"slug": "alpha"})
    refused = client.post(target, creation_data(version.pk, a.pk, b.pk), headers={"HX-Request": "true"})
    fragment = html.unescape(refused.content.decode())
    assert refused.status_code == 200 and "<html" not in fragment and 'id="comparison-form"' in fragment
    assert "“X”" in fragment and "line 1" in fragment
    created = client.post(target, creation_data(version.pk, a.pk, c.pk), headers={"HX-Request": "true"})
    assert created["HX-Redirect"] == Comparison.objects.get().get_absolute_url()


def test_the_creation_page_says_what_is_missing_when_there_is_nothing_to_compare(
    cast: Cast, client: Client
) -> None:
    client.force_login(cast.reviewer)
    page = client.get(reverse("comparison_create", kwargs={"slug": "alpha"})).content.decode()
    assert "needs a frozen pool version and at least two runs" in page
    assert client.put(reverse("comparison_create", kwargs={"slug": "alpha"})).status_code == 405


def test_the_form_offers_only_this_projects_pools_and_runs(cast: Cast, client: Client) -> None:
    make_pool(cast.beta, E9_POOL, by=cast.outsider, name="Beta pool")
    make_run(cast.beta, "beta run", {"q1": "A"}, by=cast.outsider)
    make_pool(cast.alpha, E9_POOL, by=cast.owner, name="Alpha pool")
    make_run(cast.alpha, "alpha run", {"q1": "A"}, by=cast.reviewer)
    client.force_login(cast.reviewer)
    page = client.get(reverse("comparison_create", kwargs={"slug": "alpha"})).content.decode()
    assert "Alpha pool v1" in page and "alpha run" in page
    assert "Beta pool" not in page and "beta run" not in page


# ---- Roles and isolation ------------------------------------------------------------------------


def test_editors_get_403_on_every_run_and_comparison_view(cast: Cast, client: Client, e9: Comparison) -> None:
    client.force_login(cast.editor)
    kwargs = {"run_id": e9.run_a_id, "comparison_id": e9.pk}
    from evaluation.urls import urlpatterns

    for pattern in urlpatterns:
        params = {k: v for k, v in kwargs.items() if k in pattern.pattern.converters}
        target = reverse(pattern.name, kwargs={"slug": "alpha", **params})
        assert client.get(target).status_code == 403, pattern.name
        assert client.post(target).status_code == 403, pattern.name


def test_editors_see_no_link_to_runs_or_comparisons(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    page = client.get(reverse("project_detail", kwargs={"slug": "alpha"})).content.decode()
    assert reverse("comparison_list", kwargs={"slug": "alpha"}) not in page
    client.force_login(cast.reviewer)
    page = client.get(reverse("project_detail", kwargs={"slug": "alpha"})).content.decode()
    assert reverse("comparison_list", kwargs={"slug": "alpha"}) in page


def test_another_projects_comparison_is_not_found_through_my_project(cast: Cast, client: Client) -> None:
    version = make_pool(cast.beta, E9_POOL, by=cast.outsider)
    a = make_run(cast.beta, "a", {"q1": "CADBE"}, by=cast.outsider)
    b = make_run(cast.beta, "b", {"q1": "ABCDE"}, by=cast.outsider)
    beta = make_comparison(cast.beta, version, a, b, by=cast.outsider, k=3)
    client.force_login(cast.owner)
    for name in ("comparison_detail", "comparison_query", "comparison_export"):
        assert (
            client.get(reverse(name, kwargs={"slug": "alpha", "comparison_id": beta.pk})).status_code == 404
        )
    assert client.get(reverse("run_download", kwargs={"slug": "alpha", "run_id": a.pk})).status_code == 404
    client.force_login(cast.outsider)
    assert client.get(reverse("comparison_list", kwargs={"slug": "alpha"})).status_code == 404


def test_the_comparison_list_shows_headline_numbers(cast: Cast, client: Client, e9: Comparison) -> None:
    client.force_login(cast.reviewer)
    page = client.get(reverse("comparison_list", kwargs={"slug": "alpha"})).content.decode()
    assert e9.name in page and f'title="{E9_NDCG!r}">0.6075<' in page
    fragment = client.get(
        reverse("comparison_list", kwargs={"slug": "alpha"}), headers={"HX-Request": "true"}
    )
    assert b"<html" not in fragment.content and b'id="comparison-table"' in fragment.content


def list_rows(page: str) -> dict[str, str]:
    """{comparison URL: its row's HTML} of the comparison list."""
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    rows = re.findall(r"<tr[^>]*>.*?</tr>", body, flags=re.S)
    return {re.search(r'<a href="([^"]+)">', row).group(1): row for row in rows}  # type: ignore[union-attr]


def alter_pool_text(comparison: Comparison, *, with_hash: bool) -> None:
    """Rewrite the comparison's pool version behind the models' back: its hashed text alone, or
    text and SHA-256 together (then only the hash the comparison pinned still tells)."""
    from tests.annotator.pools.test_immutability import tamper

    forged = "q1\tA\t0\nq1\tB\t3\n"
    pk = comparison.pool_version_id
    if with_hash:
        sha256 = hashlib.sha256(forged.encode()).hexdigest()
        tamper(
            "UPDATE annotator_poolversion SET canonical = %s, sha256 = %s WHERE id = %s", [forged, sha256, pk]
        )
    else:
        tamper("UPDATE annotator_poolversion SET canonical = %s WHERE id = %s", [forged, pk])


@pytest.mark.parametrize(
    ("with_hash", "reason"),
    [
        (False, "stored judgments do not match SHA-256"),
        (True, "this comparison was computed on"),
    ],
)
def test_the_comparison_list_refuses_the_numbers_of_a_comparison_whose_pool_version_was_altered(
    cast: Cast, client: Client, e9: Comparison, with_hash: bool, reason: str
) -> None:
    """The list shows no numbers for a comparison whose own page answers 409."""
    intact_pool = make_pool(cast.alpha, {"q1": {"A": 3, "B": 1}}, by=cast.owner, name="Intact")
    intact = make_comparison(
        cast.alpha, intact_pool, e9.run_a, e9.run_b, by=cast.reviewer, k=2, unjudged="zero"
    )
    alter_pool_text(e9, with_hash=with_hash)
    client.force_login(cast.reviewer)
    assert client.get(e9.get_absolute_url()).status_code == 409  # what the list must agree with
    list_url = reverse("comparison_list", kwargs={"slug": "alpha"})
    for response in (client.get(list_url), client.get(list_url, headers={"HX-Request": "true"})):
        assert response.status_code == 200
        rows = list_rows(response.content.decode())
        refused = html.unescape(rows[e9.get_absolute_url()])
        assert "Refused: pool version failed its integrity check" in refused
        assert reason in refused
        assert "0.6075" not in refused and "1.0000" not in refused and "1 / 0 / 0" not in refused
        assert "Refused" not in rows[intact.get_absolute_url()]
        assert 'title="' in rows[intact.get_absolute_url()]  # its numbers stay
    chinese = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    chinese.force_login(cast.reviewer)
    refused = list_rows(chinese.get(list_url).content.decode())[e9.get_absolute_url()]
    assert "已拒绝：判断池版本未通过完整性检查" in refused and "Refused" not in refused


def test_the_comparison_list_hashes_each_pool_version_once_per_request(
    cast: Cast,
    client: Client,
    e9: Comparison,
    monkeypatch: pytest.MonkeyPatch,
    django_assert_num_queries: object,
) -> None:
    """Many comparisons on one big pool must not re-hash it per row."""
    from annotator.pools import models as pools

    for n in range(3):  # three more on e9's pool, one on a second pool
        make_comparison(cast.alpha, e9.pool_version, e9.run_b, e9.run_a, by=cast.reviewer, k=n + 1)
    other = make_pool(cast.alpha, {"q1": {"A": 3, "B": 1}}, by=cast.owner, name="Other")
    make_comparison(cast.alpha, other, e9.run_a, e9.run_b, by=cast.reviewer, k=2, unjudged="zero")
    alter_pool_text(e9, with_hash=False)
    hashed: list[int] = []
    real = pools.sha256_hex

    def counted(text: str) -> str:
        hashed.append(len(text))
        return real(text)

    monkeypatch.setattr(pools, "sha256_hex", counted)
    client.force_login(cast.reviewer)
    # Session, user, membership + project, the paginator's count, the page of comparisons with
    # their project, pool versions and runs, and one for both versions' canonical texts.
    with django_assert_num_queries(6):  # type: ignore[operator]
        page = client.get(reverse("comparison_list", kwargs={"slug": "alpha"})).content.decode()
    assert len(hashed) == 2  # two distinct versions, five rows
    assert page.count("Refused: pool version failed its integrity check") == 4


def test_a_run_used_by_a_comparison_cannot_be_deleted_on_its_own(e9: Comparison) -> None:
    from django.db.models import RestrictedError

    with pytest.raises(RestrictedError):
        e9.run_a.delete()
    assert Comparison.objects.filter(pk=e9.pk).exists()


def test_few_paired_queries_get_a_word_of_caution_and_enough_get_none(cast: Cast, client: Client) -> None:
    """Two queries can give a bootstrap interval excluding 0 beside p = 0.5: the page explains it."""
    from evaluation.views import FEW_PAIRED_QUERIES

    client.force_login(cast.reviewer)
    for n, warned in ((1, True), (3, True), (FEW_PAIRED_QUERIES, False)):
        pool = {f"q{i}": {"A": 3, "B": 1} for i in range(n)}
        version = make_pool(cast.alpha, pool, by=cast.owner, name=f"Pool {n}")
        a = make_run(cast.alpha, f"a{n}", {q: ["A", "B"] for q in pool}, by=cast.reviewer)
        b = make_run(cast.alpha, f"b{n}", {q: ["B", "A"] for q in pool}, by=cast.reviewer)
        comparison = make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
        html = client.get(comparison.get_absolute_url()).content.decode()
        assert ('data-testid="few-queries"' in html) is warned, n
        if n == 1:
            # One query: the warning speaks of no interval, since none is computed, and no
            # interval line names resamples and a seed.
            assert "Only 1 paired query: the sign flip test has two outcomes" in html
            assert "too narrow" not in html and "resamples" not in html
            assert "not defined for fewer than two paired queries" in html
        elif warned:
            assert f"Only {n} paired queries: these tests say little on so few" in html


@pytest.mark.parametrize(
    ("with_hash", "reason"),
    [
        (False, "stored judgments do not match SHA-256"),
        (True, "this comparison was computed on"),
    ],
)
def test_the_export_is_refused_like_the_page_when_the_pool_version_was_altered(
    cast: Cast, client: Client, e9: Comparison, with_hash: bool, reason: str
) -> None:
    """With text and SHA-256 rewritten together, export.zip is refused as the page is: it would
    hold the altered pool beside numbers computed on the old one."""
    export = reverse("comparison_export", kwargs={"slug": "alpha", "comparison_id": e9.pk})
    client.force_login(cast.reviewer)
    assert client.get(export).status_code == 200
    alter_pool_text(e9, with_hash=with_hash)
    response = client.get(export)
    assert response.status_code == 409
    assert response["Content-Type"].startswith("text/html")
    assert reason in html.unescape(response.content.decode())
