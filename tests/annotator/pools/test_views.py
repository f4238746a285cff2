"""The pools pages: who may open them, what they show, and each form with and without htmx."""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.models import GradingSet, Pool, PoolVersion, PoolVersionSource
from annotator.pools.freeze import pool_freeze
from annotator.pools.services import grading_set_create_from_version, pool_version_create
from tests import factories
from tests.conftest import Cast

PHONE = {("q1", d): (g, g) for d, g in zip("ABCDE", (3, 2, 1, 0, 0), strict=True)}
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def frozen(cast: Cast) -> PoolVersion:
    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), PHONE, name="Phone number change"
    )
    return pool_freeze(grading_set=grading_set, by=cast.reviewer)


def version_url(name: str, version: PoolVersion, **extra: Any) -> str:
    return reverse(
        name,
        kwargs={
            "slug": version.pool.project.slug,
            "pool_id": version.pool_id,
            "version_id": version.pk,
            **extra,
        },
    )


def login(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


def html_text(page: str) -> str:
    """The page with its entities decoded (the messages' curly quotes and apostrophes)."""
    import html

    return html.unescape(page)


# ---- list, pool and version pages -----------------------------------------------------------------


def test_the_pool_list_shows_an_empty_state_and_the_sets_ready_to_freeze(cast: Cast, client: Client) -> None:
    fresh = GradingSet.objects.create(project=cast.alpha, name="Fresh set")
    graded = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE, name="Graded set")
    html = login(client, cast.reviewer).get(reverse("pool_list", kwargs={"slug": "alpha"})).content.decode()
    assert "No frozen pools yet." in html
    assert "Fresh set" in html and "Graded set" in html
    assert reverse("pool_freeze", kwargs={"slug": "alpha", "set_id": graded.pk}) in html
    # A set with nothing to freeze says so instead of offering a button that can only refuse.
    assert reverse("pool_freeze", kwargs={"slug": "alpha", "set_id": fresh.pk}) not in html
    assert "No final grade yet" in html
    assert "Import a judgments file" not in html  # owners only


def test_the_pool_list_shows_status_version_counts_hash_and_who_froze(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    html = login(client, cast.owner).get(reverse("pool_list", kwargs={"slug": "alpha"})).content.decode()
    assert "Phone number change" in html
    assert "Frozen · version 1" in html
    assert f">{frozen.hash_prefix}…</code>" in html
    assert "1 / 1 / 1 / 2" in html  # grades 3/2/1/0
    assert "rita" in html
    assert "Import a judgments file" in html


def test_the_pool_list_costs_the_same_queries_for_few_and_many_pools(
    cast: Cast, client: Client, django_assert_max_num_queries: Any
) -> None:
    login(client, cast.reviewer)
    url = reverse("pool_list", kwargs={"slug": "alpha"})

    def add_pools(n: int) -> None:
        for i in range(n):
            pool = Pool.objects.create(project=cast.alpha, name=f"P{Pool.objects.count()}-{i}")
            pool_version_create(pool=pool, judgments=[("q", "d", 1, "")], source="frozen", by=cast.owner)

    add_pools(2)
    with CaptureQueriesContext(connection) as few:
        client.get(url)
    add_pools(10)
    # session, user, membership, pool count, pool rows, their latest versions, unfrozen sets, and
    # (none is open here) whether the project has a set at all, for the empty state's wording
    assert len(few) == 8
    with django_assert_max_num_queries(len(few)):
        client.get(url)


def test_the_version_page_shows_counts_distribution_provenance_and_exports(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    response = login(client, cast.reviewer).get(version_url("pool_version_detail", frozen))
    html = response.content.decode()
    assert response.status_code == 200
    assert frozen.sha256 in html
    assert "Integrity check passed" in html
    assert "Question q1?" in html  # per-query row with the query text
    assert "Pooled from runs" in html and "run bm25.trec, depth 10" in html
    for fmt in ("qrels", "csv", "jsonl"):
        assert f"?format={fmt}" in html
    assert "Evidence gap" not in html


def test_the_version_page_warns_about_documents_changed_since_grading(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    factories.Document.upsert(project=cast.alpha, external_id="A", title="Document A", body="A new body")
    html = login(client, cast.reviewer).get(version_url("pool_version_detail", frozen)).content.decode()
    assert "Evidence gap: documents that have a newer version than the one graded: 1." in html


def test_the_version_page_lists_exclusions_with_their_reason(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {**PHONE, ("q1", "B"): (1, 3)}
    )
    version = pool_freeze(
        grading_set=grading_set, by=cast.reviewer, exclude_unsettled=True, reason="B is unclear"
    )
    html = login(client, cast.reviewer).get(version_url("pool_version_detail", version)).content.decode()
    assert "Pairs left out when freezing: 1" in html
    assert "B is unclear" in html


def test_the_per_query_table_pages_through_htmx_and_costs_constant_queries(
    cast: Cast, client: Client, django_assert_max_num_queries: Any
) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Big")
    rows = [(f"q{i:03}", f"d{j}", (i + j) % 4, "") for i in range(120) for j in range(5)]
    version = pool_version_create(pool=pool, judgments=rows, source=PoolVersionSource.FROZEN, by=cast.owner)
    login(client, cast.reviewer)
    # session, user, membership, version, query texts (the integrity checks are the full page's)
    with django_assert_max_num_queries(6):
        response = client.get(version_url("pool_version_detail", version), {"page": 3}, **HTMX)
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="query-table">')
    assert "q100" in html and "q099" not in html
    assert "Page 3 of 3" in html


def test_the_manifest_is_json_with_the_hash(cast: Cast, client: Client, frozen: PoolVersion) -> None:
    data = json.loads(login(client, cast.reviewer).get(version_url("pool_version_manifest", frozen)).content)
    assert data["sha256"] == frozen.sha256 and data["integrity"] == "ok" and data["version"] == 1


@pytest.mark.parametrize("fmt", ["qrels", "csv", "jsonl"])
def test_an_export_downloads_a_zip_with_data_and_manifest(
    cast: Cast, client: Client, frozen: PoolVersion, fmt: str
) -> None:
    response = login(client, cast.reviewer).get(version_url("pool_version_export", frozen), {"format": fmt})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert f'filename="phone-number-change-v1-{fmt}.zip"' in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert json.loads(archive.read("manifest.json"))["sha256"] == frozen.sha256
    data_only = client.get(version_url("pool_version_export", frozen), {"format": fmt, "part": "data"})
    assert data_only.content == archive_data(response.content, f"phone-number-change-v1.{fmt}")


def test_an_export_of_a_chinese_named_pool_keeps_the_name_in_its_file_names(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    """A pool name beyond ASCII keeps its characters in the export's file name."""
    from urllib.parse import quote

    frozen.pool.name = "QA 退款 set ✓"
    frozen.pool.save()
    response = login(client, cast.reviewer).get(version_url("pool_version_export", frozen), {"format": "csv"})
    assert response["Content-Disposition"] == (
        f"attachment; filename=\"qa-set-v1-csv.zip\"; filename*=utf-8''{quote('qa-退款-set-v1-csv.zip')}"
    )
    assert archive_data(response.content, "qa-退款-set-v1.csv")  # the data file inside, named alike


def archive_data(payload: bytes, name: str) -> bytes:
    with zipfile.ZipFile(io.BytesIO(payload)) as archive:
        return archive.read(name)


def test_an_unknown_export_format_goes_back_with_a_clear_message(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    response = login(client, cast.reviewer).get(
        version_url("pool_version_export", frozen), {"format": "xlsx"}, follow=True
    )
    assert "Unknown export format “xlsx”: choose one of qrels, csv, jsonl." in response.content.decode()
    # An unknown part is refused, not served the zip.
    response = client.get(
        version_url("pool_version_export", frozen), {"format": "csv", "part": "zzz"}, follow=True
    )
    assert response.headers["Content-Type"].startswith("text/html")
    assert "Unknown export part “zzz”" in response.content.decode()


def test_a_format_that_cannot_hold_the_ids_goes_back_with_the_reason(cast: Cast, client: Client) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Spaced")
    version = pool_version_create(
        pool=pool, judgments=[("q1", "doc one", 2, "")], source="frozen", by=cast.owner
    )
    response = login(client, cast.reviewer).get(
        version_url("pool_version_export", version), {"format": "qrels"}
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "This version cannot be written as qrels:" in html and "contains whitespace" in html
    assert client.get(version_url("pool_version_export", version), {"format": "csv"}).status_code == 200
    # The links are plain links (the server sends files as attachments): with a download attribute
    # the browser would save this refusal page as download.html and the reason would go unseen.
    page = client.get(version_url("pool_version_detail", version)).content.decode()
    export = version_url("pool_version_export", version)
    # The page does not offer the qrels export it would refuse, and says why.
    assert page.count(f'href="{export}?format=') == 4 and "?format=qrels" not in page
    assert "No TREC qrels export: some IDs of this version hold a space" in html_text(page)
    assert re.search(r"<a [^>]*\bdownload\b", page) is None
    frozen_page = client.get(version_url("pool_version_detail", frozen_without_spaces(cast))).content.decode()
    assert "?format=qrels" in frozen_page and "No TREC qrels export" not in frozen_page


def frozen_without_spaces(cast: Cast) -> PoolVersion:
    pool = Pool.objects.create(project=cast.alpha, name="Plain")
    return pool_version_create(
        pool=pool, judgments=[("q1", "doc-one", 2, "")], source="frozen", by=cast.owner
    )


def test_the_diff_page_lists_added_removed_and_changed_pairs(cast: Cast, client: Client) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Lineage")
    v1 = pool_version_create(
        pool=pool,
        judgments=[("q1", "A", 3, ""), ("q1", "B", 2, ""), ("q1", "C", 1, "")],
        source="frozen",
        by=cast.owner,
    )
    v2 = pool_version_create(
        pool=pool,
        judgments=[("q1", "A", 3, ""), ("q1", "B", 1, ""), ("q1", "D", 0, "")],
        source="frozen",
        by=cast.owner,
    )
    login(client, cast.reviewer)
    url = version_url("pool_version_diff", v1, other_id=v2.pk)
    html = client.get(url).content.decode()
    assert "Added pairs (1)" in html and "Removed pairs (1)" in html and "Changed grades (1)" in html
    assert html.count('class="diff-') == 3
    only_changed = client.get(url, {"kind": "changed"}, **HTMX).content.decode()
    assert only_changed.lstrip().startswith('<div id="diff-table">')
    assert "grade changed" in only_changed and "added" not in only_changed


def test_the_version_pages_compare_links_run_from_the_older_version_to_the_newer(
    cast: Cast, client: Client
) -> None:
    """On version 2's page, "compare with version 1" shows v1 -> v2, so v2's addition reads "added"."""
    pool = Pool.objects.create(project=cast.alpha, name="Lineage")
    v1 = pool_version_create(pool=pool, judgments=[("q1", "A", 3, "")], source="frozen", by=cast.owner)
    v2 = pool_version_create(
        pool=pool, judgments=[("q1", "A", 3, ""), ("q1", "B", 1, "")], source="frozen", by=cast.owner
    )
    login(client, cast.reviewer)
    forward = version_url("pool_version_diff", v1, other_id=v2.pk)
    for page in (v1, v2):
        assert f'href="{forward}"' in client.get(version_url("pool_version_detail", page)).content.decode()
    assert "Added pairs (1)" in client.get(forward).content.decode()
    # The empty "Removed pairs (0)" filter must not say the two versions hold the same judgments.
    removed = client.get(forward, {"kind": "removed"}).content.decode()
    assert "No removed pairs: the other changes are under “All changes”." in removed
    assert "both versions hold the same judgments" not in removed


def test_a_diff_between_two_pools_names_each_pool_in_its_column(cast: Cast, client: Client) -> None:
    # Both versions are v1: "Grade in v1" twice could not be told apart.
    left = pool_version_create(
        pool=Pool.objects.create(project=cast.alpha, name="Phones"),
        judgments=[("q1", "A", 3, "")],
        source="frozen",
        by=cast.owner,
    )
    right = pool_version_create(
        pool=Pool.objects.create(project=cast.alpha, name="Refunds"),
        judgments=[("q1", "A", 1, "")],
        source="frozen",
        by=cast.owner,
    )
    html = (
        login(client, cast.reviewer)
        .get(version_url("pool_version_diff", left, other_id=right.pk))
        .content.decode()
    )
    assert "Grade in Phones v1" in html and "Grade in Refunds v1" in html and "Grade in v1" not in html


def test_the_diff_page_paginates_long_lists(cast: Cast, client: Client) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Long")
    v1 = pool_version_create(pool=pool, judgments=[("q", "a", 1, "")], source="frozen", by=cast.owner)
    v2 = pool_version_create(
        pool=pool, judgments=[("q", f"d{i:03}", 1, "") for i in range(120)], source="frozen", by=cast.owner
    )
    html = (
        login(client, cast.reviewer)
        .get(version_url("pool_version_diff", v1, other_id=v2.pk), {"page": 3})
        .content.decode()
    )
    assert "Page 3 of 3" in html and "d119" in html and "d000" not in html


# ---- freezing -------------------------------------------------------------------------------------


def freeze_url(grading_set: GradingSet) -> str:
    return reverse("pool_freeze", kwargs={"slug": grading_set.project.slug, "set_id": grading_set.pk})


def test_a_reviewer_freezes_a_set_and_lands_on_the_version(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE)
    response = login(client, cast.reviewer).post(freeze_url(grading_set), {"confirm": "on"})
    version = PoolVersion.objects.get()
    assert response.status_code == 302
    assert response["Location"] == version_url("pool_version_detail", version)
    assert "Frozen as Set version 1" in client.get(response["Location"]).content.decode()


def test_freezing_a_copy_unchanged_says_it_repeats_the_earlier_version(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE)
    login(client, cast.reviewer).post(freeze_url(grading_set), {"confirm": "on"})
    first = PoolVersion.objects.get()
    assert (
        "holds exactly the same judgments"
        not in client.get(version_url("pool_version_detail", first)).content.decode()
    )
    copy = grading_set_create_from_version(version=first, by=cast.reviewer, name="Again")
    response = client.post(freeze_url(copy), {"confirm": "on"}, follow=True)
    second = PoolVersion.objects.get(number=2)
    assert second.sha256 == first.sha256
    assert (
        "Version 2 holds exactly the same judgments as version 1 (same SHA-256)." in response.content.decode()
    )


def test_freezing_through_htmx_redirects_the_whole_page(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE)
    response = login(client, cast.owner).post(freeze_url(grading_set), {"confirm": "on"}, **HTMX)
    assert response.status_code == 200
    assert response["HX-Redirect"] == version_url("pool_version_detail", PoolVersion.objects.get())


def test_the_freeze_page_lists_what_blocks_freezing(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {**PHONE, ("q1", "B"): (2, 3)}
    )
    html = login(client, cast.reviewer).get(freeze_url(grading_set)).content.decode()
    assert "Pairs that block freezing: 1" in html
    assert "open dispute (Waiting for every editor&#x27;s reason)" in html


def test_freezing_a_blocked_set_is_refused_with_the_list_as_a_fragment(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {**PHONE, ("q1", "B"): (2, 3)}
    )
    response = login(client, cast.reviewer).post(freeze_url(grading_set), {"confirm": "on"}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="freeze-form">')
    assert "Pairs that cannot be frozen yet (1): (q1, B): open dispute" in html
    assert not PoolVersion.objects.exists()


def test_leaving_pairs_out_needs_a_reason_on_the_form(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {**PHONE, ("q1", "B"): (2, 3)}
    )
    login(client, cast.reviewer)
    html = client.post(freeze_url(grading_set), {"confirm": "on", "exclude_unsettled": "on"}).content.decode()
    assert "Say why these pairs are left out" in html
    response = client.post(
        freeze_url(grading_set), {"confirm": "on", "exclude_unsettled": "on", "reason": "unclear"}
    )
    assert response.status_code == 302
    assert PoolVersion.objects.get().exclusions[0]["reason"] == "unclear"


def test_freezing_without_confirming_re_renders_the_form(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE)
    response = login(client, cast.reviewer).post(freeze_url(grading_set), {})
    assert response.status_code == 200
    assert "Tick the box to confirm: freezing cannot be undone." in response.content.decode()
    assert not PoolVersion.objects.exists()


def test_editors_cannot_freeze_and_other_methods_are_refused(cast: Cast, client: Client) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE)
    assert login(client, cast.editor).post(freeze_url(grading_set), {"confirm": "on"}).status_code == 403
    assert login(client, cast.reviewer).put(freeze_url(grading_set)).status_code == 405
    assert not PoolVersion.objects.exists()


def test_a_frozen_set_cannot_be_frozen_again_from_the_page(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    html = login(client, cast.reviewer).get(freeze_url(frozen.grading_set)).content.decode()
    assert "This set was frozen already as Phone number change version 1." in html


def test_the_freeze_page_refuses_before_sending_when_a_file_was_imported_as_the_next_version(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    """A set continuing version 1, when an owner imported a file as version 2 meanwhile, says so
    before a Freeze is sent, not only once it is."""
    from annotator.pools.files import pool_import
    from annotator.pools.services import FreezeError

    round_2 = grading_set_create_from_version(version=frozen, by=cast.reviewer, name="Round 2")
    login(client, cast.reviewer)
    before = client.get(freeze_url(round_2)).content.decode()
    assert 'name="confirm"' in before and "has been added since" not in before
    imported = pool_import(
        project=cast.alpha,
        by=cast.owner,
        data=b"q1 0 A 2\n",
        file_name="late.qrels",
        fmt="qrels",
        pool=frozen.pool,
    )
    assert imported.number == 2
    # The words the writer refuses with once the form is sent.
    with pytest.raises(FreezeError) as refused:
        rows = [("q1", "A", 3, "")]
        pool_version_create(
            pool=frozen.pool, judgments=rows, source="frozen", by=cast.reviewer, continues=frozen
        )
    words = str(refused.value)
    assert words.startswith(
        "This set started from version 1 of Phone number change, but version 2 has been added since"
    )

    page = client.get(freeze_url(round_2)).content.decode()
    assert html_text(page).count(words) == 1
    assert 'role="alert" data-testid="freeze-refusal"' in page
    # No button that can only be refused.
    assert 'name="confirm"' not in page and "Freeze this set" not in page
    assert "Phone number change, version 3" not in page  # nor a version it cannot become
    # Sent anyway (a page opened before the import): the same words, once, and nothing frozen.
    for headers in ({}, {"HX-Request": "true"}):
        response = client.post(freeze_url(round_2), {"confirm": "on"}, headers=headers)
        assert response.status_code == 200
        assert html_text(response.content.decode()).count(words) == 1
    assert list(frozen.pool.versions.order_by("number").values_list("number", flat=True)) == [1, 2]


# ---- a new version --------------------------------------------------------------------------------


def test_a_reviewer_starts_a_new_version_from_a_frozen_one(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    url = version_url("pool_version_continue", frozen)
    login(client, cast.reviewer)
    assert "Start a new version of Phone number change from version 1" in client.get(url).content.decode()
    response = client.post(url, {"confirm": "on", "name": "Phone, round 2"})
    assert response.status_code == 302
    new_set = GradingSet.objects.get(name="Phone, round 2")
    assert new_set.based_on == frozen and new_set.candidates.count() == 5
    assert response["Location"] == reverse(
        "grading_set_detail", kwargs={"slug": "alpha", "set_id": new_set.pk}
    )
    html = client.get(response["Location"]).content.decode()
    assert "Phone, round 2" in html and "holds the 5 pairs of version 1" in html


def test_only_the_newest_version_offers_a_new_version_and_a_second_start_is_refused(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    login(client, cast.reviewer)
    continue_url = version_url("pool_version_continue", frozen)
    assert continue_url in client.get(version_url("pool_version_detail", frozen)).content.decode()
    client.post(continue_url, {"confirm": "on", "name": "Round 2"})
    again = client.post(continue_url, {"confirm": "on", "name": "Round 2 again"}).content.decode()
    assert "Grading set “Round 2” already continues Phone number change from version 1" in again
    v2 = pool_freeze(grading_set=GradingSet.objects.get(name="Round 2"), by=cast.reviewer)
    old_page = client.get(version_url("pool_version_detail", frozen)).content.decode()
    assert continue_url not in old_page and "New versions start from the newest one" in old_page
    assert version_url("pool_version_detail", v2) in old_page
    assert (
        version_url("pool_version_continue", v2)
        in client.get(version_url("pool_version_detail", v2)).content.decode()
    )


def test_the_new_sets_page_names_its_version_in_each_readers_language(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    """The "started from" line is not stored as text in the language of whoever clicked."""
    login(client, cast.reviewer)
    client.post(
        version_url("pool_version_continue", frozen),
        {"confirm": "on", "name": "Round 2"},
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )
    new_set = GradingSet.objects.get(name="Round 2")
    assert new_set.description == ""
    address = reverse("grading_set_detail", kwargs={"slug": "alpha", "set_id": new_set.pk})
    english = client.get(address, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert f"Started from Phone number change version 1 (SHA-256 {frozen.hash_prefix}…)." in english
    chinese = client.get(address, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f"基于 Phone number change 版本 1（SHA-256 {frozen.hash_prefix}…）。" in chinese


def test_starting_a_new_version_through_htmx(cast: Cast, client: Client, frozen: PoolVersion) -> None:
    url = version_url("pool_version_continue", frozen)
    login(client, cast.owner)
    invalid = client.post(url, {}, **HTMX)
    assert invalid.status_code == 200 and invalid.content.decode().lstrip().startswith(
        '<section class="card" id="continue-form">'
    )
    done = client.post(url, {"confirm": "on"}, **HTMX)
    new_set = GradingSet.objects.get(name="Phone number change v2")
    assert done["HX-Redirect"] == reverse(
        "grading_set_detail", kwargs={"slug": "alpha", "set_id": new_set.pk}
    )


def test_editors_cannot_start_a_new_version_and_delete_is_refused(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    url = version_url("pool_version_continue", frozen)
    assert login(client, cast.editor).post(url, {"confirm": "on"}).status_code == 403
    assert login(client, cast.reviewer).delete(url).status_code == 405
    assert GradingSet.objects.count() == 1


# ---- imports --------------------------------------------------------------------------------------


def upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode("utf-8"), content_type="text/plain")


IMPORT_URL = reverse("pool_import", kwargs={"slug": "alpha"})


def test_an_owner_imports_a_qrels_file_as_a_new_pool(cast: Cast, client: Client) -> None:
    response = login(client, cast.owner).post(
        IMPORT_URL,
        {"file": upload("run.qrels", "q1 0 A 3\nq1 0 B 0\n"), "format": "auto", "pool_name": "External"},
    )
    version = PoolVersion.objects.get()
    assert response.status_code == 302
    assert response["Location"] == version_url("pool_version_detail", version)
    assert (version.pool.name, version.source, version.file_name) == ("External", "imported", "run.qrels")
    assert (
        "Imported run.qrels as External version 1: 2 judgments"
        in client.get(response["Location"]).content.decode()
    )


def test_importing_into_an_existing_pool_adds_the_next_version(
    cast: Cast, client: Client, frozen: PoolVersion
) -> None:
    login(client, cast.owner).post(
        IMPORT_URL,
        {
            "file": upload("more.csv", "query_id,doc_id,grade\nq1,A,3\n"),
            "format": "auto",
            "pool": frozen.pool_id,
        },
    )
    assert list(frozen.pool.versions.values_list("number", "source")) == [(2, "imported"), (1, "frozen")]


def test_a_bad_file_re_renders_the_form_with_the_line_as_a_fragment(cast: Cast, client: Client) -> None:
    response = login(client, cast.owner).post(
        IMPORT_URL,
        {"file": upload("bad.qrels", "q1 0 A 3\nq1 0 B 9\n"), "format": "auto", "pool_name": "Bad"},
        **HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section class="card" id="import-form">')
    assert "bad.qrels, line 2: query “q1”, document “B”: grade 9 is outside 0..3" in html
    assert not Pool.objects.exists()


def test_the_import_form_explains_missing_choices(cast: Cast, client: Client) -> None:
    html = login(client, cast.owner).post(IMPORT_URL, {"format": "auto"}).content.decode()
    assert "This field is required." in html
    html = client.post(
        IMPORT_URL, {"file": upload("a.qrels", "q 0 d 1\n"), "format": "auto", "grade_map": "9"}
    ).content.decode()
    assert "grade map entry “9” is not FROM:TO" in html
    assert "Name the new pool, or choose an existing pool above." in html


def test_reviewers_cannot_import_and_put_is_refused(cast: Cast, client: Client) -> None:
    data = {"file": upload("a.qrels", "q 0 d 1\n"), "format": "auto", "pool_name": "X"}
    assert login(client, cast.reviewer).post(IMPORT_URL, data).status_code == 403
    assert login(client, cast.owner).put(IMPORT_URL).status_code == 405
    assert not Pool.objects.exists()


def test_pool_pages_are_closed_to_editors(cast: Cast, client: Client, frozen: PoolVersion) -> None:
    login(client, cast.editor)
    assert client.get(reverse("pool_list", kwargs={"slug": "alpha"})).status_code == 403
    assert client.get(version_url("pool_version_detail", frozen)).status_code == 403
    assert client.get(version_url("pool_version_export", frozen), {"format": "csv"}).status_code == 403


def test_leaving_out_the_listed_pairs_never_leaves_out_a_pair_that_blocked_only_later(
    cast: Cast, client: Client
) -> None:
    """A freeze page opened earlier must not leave out a pair added since, under a reason written
    for others."""
    import re

    from annotator.models import Candidate

    grading_set = factories.graded_set(
        cast.alpha, (cast.editor, cast.editor2), {**PHONE, ("q1", "B"): (2, 3)}
    )
    login(client, cast.reviewer)
    page = client.get(freeze_url(grading_set)).content.decode()
    seen = re.search(r'name="blockers_seen" value="([0-9a-f]+)"', page)
    assert seen is not None
    # Meanwhile an owner adds a pair nobody has graded.
    Candidate.objects.create(
        grading_set=grading_set,
        query=factories.query(cast.alpha, "q1"),
        document=factories.document(cast.alpha, "NEW"),
    )
    data = {
        "confirm": "on",
        "exclude_unsettled": "on",
        "reason": "B is unclear",
        "blockers_seen": seen.group(1),
    }
    html = client.post(freeze_url(grading_set), data).content.decode()
    assert "The pairs that block freezing changed since this page was shown (2 now)" in html
    assert not PoolVersion.objects.exists()
    fresh = re.search(r'name="blockers_seen" value="([0-9a-f]+)"', html)
    assert fresh is not None and fresh.group(1) != seen.group(1)
    response = client.post(freeze_url(grading_set), {**data, "blockers_seen": fresh.group(1)})
    assert response.status_code == 302
    assert sorted(e["doc_id"] for e in PoolVersion.objects.get().exclusions) == ["B", "NEW"]


def test_the_version_page_leads_on_to_a_comparison_and_its_shares_add_up(cast: Cast, client: Client) -> None:
    """Grades 3, 1, 1, 1, 2, 2, 2, 2 (1/8 = 12.5 %, 3/8 = 37.5 %, 4/8 = 50 %): whole percents round
    12.5 and 37.5 down and the column would say 99 %; the page leads on to a comparison."""
    rows = [("q", d, g) for d, g in zip("ABCDEFGH", (3, 1, 1, 1, 2, 2, 2, 2), strict=True)]
    version = pool_version_create(
        pool=Pool.objects.create(project=cast.alpha, name="Shares"),
        judgments=[(*r, "unanimous") for r in rows],
        source=PoolVersionSource.FROZEN,
        by=cast.reviewer,
    )
    html = login(client, cast.reviewer).get(version_url("pool_version_detail", version)).content.decode()
    for share in ("12.5%", "37.5%", "50.0%"):
        assert share in html, share
    assert '<rect class="bar g3" width="12.5%"' in html  # drawn to scale, without a style attribute
    assert f"{reverse('comparison_create', kwargs={'slug': 'alpha'})}?pool_version={version.pk}" in html


def test_the_new_version_page_of_an_older_version_says_why_instead_of_offering_the_form(
    cast: Cast, client: Client
) -> None:
    """Once version 2 exists, version 1's page shows no form that would be refused once sent."""
    pool = Pool.objects.create(project=cast.alpha, name="Lineage")
    v1 = pool_version_create(pool=pool, judgments=[("q1", "A", 3, "")], source="frozen", by=cast.owner)
    v2 = pool_version_create(pool=pool, judgments=[("q1", "A", 2, "")], source="frozen", by=cast.owner)
    login(client, cast.reviewer)
    old = client.get(version_url("pool_version_continue", v1)).content.decode()
    assert "is not the newest version of Lineage: start from version 2" in old
    assert 'name="confirm"' not in old
    newest = client.get(version_url("pool_version_continue", v2)).content.decode()
    assert 'name="confirm"' in newest and "not the newest" not in newest
