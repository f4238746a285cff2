"""The grading set's page at scale: its query table and the owner's pair list page without
sorting or grouping every pair of the set (`GradingSet.queries`, `PairsInOrder`)."""

from __future__ import annotations

import re

import pytest
from django.core.paginator import Paginator
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.grading import views as grading_views
from annotator.grading.models import PairsInOrder
from annotator.models import Candidate, CandidateSource
from tests.conftest import Cast
from tests.factories import make_document, make_query, make_set

# Query external IDs out of creation order, with 1 to 4 pairs each; one query has no pair here.
LAYOUT = {"q-b": "zyx", "q-a": "m", "q-d": "dcba", "q-c": "", "q-e": "qp"}


def _set(cast: Cast):  # type: ignore[no-untyped-def]
    grading_set = make_set(cast.alpha, "Scale")
    for query_id, docs in LAYOUT.items():
        query = make_query(cast.alpha, query_id)
        for doc in docs:
            Candidate.objects.create(
                grading_set=grading_set,
                query=query,
                document=make_document(cast.alpha, f"{query_id}-{doc}"),
                source=CandidateSource.MANUAL,
            )
    return grading_set


@pytest.mark.parametrize("batch", [1, 2, 100])  # queries counted per read, crossing batches or not
@pytest.mark.parametrize("per_page", [1, 2, 3, 4, 7, 20])
def test_every_page_of_the_pair_list_equals_the_same_page_of_the_whole_sorted_list(
    cast: Cast, per_page: int, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(PairsInOrder, "COUNT_BATCH", batch)
    grading_set = _set(cast)
    pairs = Candidate.objects.filter(grading_set=grading_set)
    expected = list(
        pairs.order_by("query__external_id", "document__external_id").values_list("pk", flat=True)
    )
    assert len(expected) == 10
    paginator = Paginator(PairsInOrder(grading_set, pairs), per_page)
    assert paginator.count == 10
    seen = [pair.pk for number in paginator.page_range for pair in paginator.page(number)]
    assert seen == expected
    # A fresh list asked for its last page first counts its way there the same.
    last = Paginator(PairsInOrder(grading_set, pairs), per_page).page(paginator.num_pages)
    assert [pair.pk for pair in last] == expected[(paginator.num_pages - 1) * per_page :]


def test_the_query_table_lists_queries_with_pairs_in_id_order_with_their_counts(
    cast: Cast, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grading_views, "PAGE_SIZE", 3)
    grading_set = _set(cast)
    client.force_login(cast.owner)
    address = reverse("grading_set_detail", kwargs={"slug": cast.alpha.slug, "set_id": grading_set.pk})
    pages = [client.get(address + f"?page={n}").content.decode() for n in (1, 2)]
    section = [page.split('id="queries-heading"')[1].split("</section>")[0] for page in pages]
    rows = [re.findall(r"<code>(q-\w)</code>.*?<td class=\"num\">(\d+)</td>", s, re.S) for s in section]
    assert rows == [[("q-a", "1"), ("q-b", "3"), ("q-d", "4")], [("q-e", "2")]]  # q-c has no pair here
    assert "Page 1 of 2" in pages[0]


def test_a_deep_page_of_the_pair_list_reads_only_the_pairs_of_the_queries_it_covers(cast: Cast) -> None:
    grading_set = _set(cast)
    pairs = Candidate.objects.filter(grading_set=grading_set)
    with CaptureQueriesContext(connection) as queries:
        page = Paginator(PairsInOrder(grading_set, pairs), 2).page(4)  # pairs 7-8: q-d's last two
    assert [pair.document.external_id for pair in page] == ["q-d-c", "q-d-d"]
    listing = [
        q["sql"] for q in queries.captured_queries if "ORDER BY" in q["sql"] and "document" in q["sql"]
    ]
    assert len(listing) == 1 and " IN (" in listing[0]  # restricted to the covered query, not every pair
