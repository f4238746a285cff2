"""A frozen pool version cannot change: not through the ORM, the admin, a view or raw SQL."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.urls import reverse

from annotator.models import Pool, PoolJudgment, PoolVersion, PoolVersionSource
from annotator.pools.models import PoolImmutableError, PoolIntegrityError
from annotator.pools.services import pool_version_create
from tests.conftest import Cast, make_user

JUDGMENTS = [("q1", "A", 3, "unanimous"), ("q1", "B", 2, "adjudicated"), ("q2", "C", 0, "unanimous")]
on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the trigger exists on PostgreSQL only"
)


@pytest.fixture
def version(cast: Cast) -> PoolVersion:
    pool = Pool.objects.create(project=cast.alpha, name="Frozen")
    return pool_version_create(
        pool=pool, judgments=JUDGMENTS, source=PoolVersionSource.FROZEN, by=cast.reviewer
    )


def assert_unchanged(version: PoolVersion) -> None:
    stored = PoolVersion.objects.get(pk=version.pk)
    assert stored.sha256 == version.sha256
    assert stored.canonical == version.canonical
    assert stored.integrity_problems() == []
    assert sorted(stored.judgments.values_list("query_id", "doc_id", "grade")) == sorted(
        (q, d, g) for q, d, g, _ in JUDGMENTS
    )


def test_saving_an_existing_version_is_refused(version: PoolVersion) -> None:
    version.exclusions = [{"query_id": "q9", "doc_id": "Z", "reason": "sneaky"}]
    with pytest.raises(PoolImmutableError):
        version.save()
    with pytest.raises(PoolImmutableError):
        version.save(update_fields=["exclusions"])
    assert_unchanged(version)


def test_saving_an_existing_judgment_is_refused(version: PoolVersion) -> None:
    judgment = version.judgments.get(query_id="q1", doc_id="B")
    judgment.grade = 3
    with pytest.raises(PoolImmutableError):
        judgment.save()
    assert_unchanged(version)


def test_deleting_a_version_or_a_judgment_instance_is_refused(version: PoolVersion) -> None:
    with pytest.raises(PoolImmutableError):
        version.judgments.first().delete()
    with pytest.raises(PoolImmutableError):
        version.delete()
    assert_unchanged(version)


@pytest.mark.parametrize(
    "mutation",
    [
        lambda v: PoolVersion.objects.filter(pk=v.pk).update(sha256="0" * 64),
        lambda v: PoolVersion.objects.filter(pk=v.pk).delete(),
        lambda v: PoolJudgment.objects.filter(version=v).update(grade=0),
        lambda v: PoolJudgment.objects.all().delete(),
        lambda v: v.judgments.update(grade=1),
        lambda v: v.judgments.all().delete(),
        lambda v: PoolJudgment.objects.bulk_update(list(v.judgments.all()), ["grade"]),
        lambda v: PoolVersion.objects.update_or_create(pk=v.pk, defaults={"sha256": "0" * 64}),
    ],
    ids=[
        "version-update",
        "version-delete",
        "judgment-update",
        "judgment-delete",
        "related-update",
        "related-delete",
        "bulk-update",
        "update-or-create",
    ],
)
def test_queryset_updates_and_deletes_are_refused(
    version: PoolVersion, mutation: Callable[[PoolVersion], object]
) -> None:
    with pytest.raises(PoolImmutableError), transaction.atomic():
        mutation(version)
    assert_unchanged(version)


def test_an_upserting_bulk_create_is_refused(version: PoolVersion) -> None:
    row = PoolJudgment(version=version, query_id="q1", doc_id="A", grade=0)
    with pytest.raises(PoolImmutableError):
        PoolJudgment.objects.bulk_create(
            [row],
            update_conflicts=True,
            unique_fields=["version", "query_id", "doc_id"],
            update_fields=["grade"],
        )
    assert_unchanged(version)


def test_a_new_object_reusing_a_frozen_primary_key_cannot_overwrite_the_row(version: PoolVersion) -> None:
    judgment = version.judgments.get(query_id="q1", doc_id="A")
    impostor = PoolJudgment(pk=judgment.pk, version=version, query_id="q1", doc_id="A", grade=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        impostor.save()
    assert_unchanged(version)


def test_a_version_cannot_be_created_with_a_hash_that_does_not_match_its_judgments(cast: Cast) -> None:
    pool = Pool.objects.create(project=cast.alpha, name="Lies")
    with pytest.raises(PoolIntegrityError):
        PoolVersion.objects.create(
            pool=pool,
            number=1,
            source="frozen",
            canonical="q1\tA\t3\n",
            sha256="0" * 64,
            frozen_by=cast.owner,
        )
    assert not PoolVersion.objects.filter(pool=pool).exists()


def test_the_admin_shows_frozen_versions_read_only(version: PoolVersion, client: Client) -> None:
    admin = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(admin)
    change = reverse("admin:annotator_poolversion_change", args=[version.pk])
    assert client.get(change).status_code == 200  # viewable
    assert client.post(change, {"sha256": "0" * 64, "number": 9}).status_code == 403
    assert (
        client.post(
            reverse("admin:annotator_poolversion_delete", args=[version.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    assert client.get(reverse("admin:annotator_poolversion_add")).status_code == 403
    judgment = version.judgments.first()
    assert (
        client.post(
            reverse("admin:annotator_pooljudgment_change", args=[judgment.pk]), {"grade": 0}
        ).status_code
        == 403
    )
    # The changelist's bulk "delete selected" action is not offered either.
    changelist = client.get(reverse("admin:annotator_pooljudgment_changelist")).content.decode()
    assert "delete_selected" not in changelist
    assert_unchanged(version)


def test_no_pools_page_changes_a_frozen_version_whatever_is_posted(
    version: PoolVersion, cast: Cast, client: Client
) -> None:
    client.force_login(cast.owner)
    kwargs = {"slug": cast.alpha.slug, "pool_id": version.pool_id, "version_id": version.pk}
    names = ["pool_version_detail", "pool_version_export", "pool_version_manifest", "pool_version_continue"]
    payload = {"grade": "0", "sha256": "0" * 64, "canonical": "", "confirm": "on", "name": "copy"}
    for name in names:
        client.post(reverse(name, kwargs=kwargs), payload)
    client.post(reverse("pool_version_diff", kwargs={**kwargs, "other_id": version.pk}), payload)
    client.post(reverse("pool_detail", kwargs={"slug": cast.alpha.slug, "pool_id": version.pool_id}), payload)
    assert_unchanged(version)
    assert PoolVersion.objects.count() == 1


@on_postgresql
@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE annotator_pooljudgment SET grade = 0 WHERE version_id = %s",
        "DELETE FROM annotator_pooljudgment WHERE version_id = %s",
        "UPDATE annotator_poolversion SET sha256 = repeat('0', 64) WHERE id = %s",
        "DELETE FROM annotator_poolversion WHERE id = %s",
    ],
    ids=["update-judgment", "delete-judgment", "update-version", "delete-version"],
)
def test_raw_sql_updates_and_deletes_are_refused_by_the_postgresql_trigger(
    version: PoolVersion, sql: str
) -> None:
    refused = pytest.raises(IntegrityError, match="frozen pool versions and their judgments are immutable")
    with refused, transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [version.pk])
    assert_unchanged(version)


def tamper(sql: str, params: list[object]) -> None:
    """Change stored rows behind the models' back, as a broken script or a disk fault would."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # Replica mode skips ordinary triggers for this transaction only (needs a superuser).
            cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL session_replication_role = origin")


def test_loading_a_version_whose_canonical_text_was_tampered_with_is_a_loud_error(
    version: PoolVersion,
) -> None:
    tamper(
        "UPDATE annotator_poolversion SET canonical = %s WHERE id = %s",
        ["q1\tA\t3\nq1\tB\t3\nq2\tC\t0\n", version.pk],
    )
    stored = PoolVersion.objects.get(pk=version.pk)
    with pytest.raises(PoolIntegrityError, match="do not match SHA-256"):
        stored.judgments_by_query()
    assert stored.integrity_problems()


def test_a_tampered_judgment_row_is_reported_although_the_canonical_text_still_matches(
    version: PoolVersion,
) -> None:
    tamper("UPDATE annotator_pooljudgment SET grade = 0 WHERE version_id = %s AND doc_id = 'B'", [version.pk])
    stored = PoolVersion.objects.get(pk=version.pk)
    stored.verify()  # the hashed text is intact...
    problems = stored.integrity_problems()
    assert problems == ["Stored row (q1, B) has grade 0, the hashed judgments say 2."]  # ...the row is not


def test_the_database_writes_intact_rows_out_as_the_hashed_text(
    cast: Cast, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast row check (a comparison of a million judgments spent ~5 of its 7 s fetching the
    rows into Python): the database's text must equal the canonical one byte for byte, in code-point
    order, where a locale's order differs ("B" < "a" < "é" < "文"), on SQLite and PostgreSQL alike."""
    from annotator.pools import models as pools

    ids = ["a", "B", "é", "f", "Z", "文档", "a b", "a-1", "a_1", "a1", "A", "ß", "👍"]
    judgments = [
        (q, d, (i + j) % 4, "") for i, q in enumerate(["q10", "q9", "Q1", "问题"]) for j, d in enumerate(ids)
    ]
    version = pool_version_create(
        pool=Pool.objects.create(project=cast.alpha, name="Order"),
        judgments=judgments,
        source=PoolVersionSource.IMPORTED,
        by=cast.owner,
    )
    stored = PoolVersion.objects.get(pk=version.pk)
    assert stored._rows_as_canonical() == stored.canonical
    # Intact: decided without reading the rows into Python.
    monkeypatch.setattr(pools, "parse_canonical", lambda text: pytest.fail("the slow path ran"))
    assert stored.integrity_problems() == []
    monkeypatch.undo()
    tamper(
        "UPDATE annotator_pooljudgment SET grade = 3 - grade WHERE version_id = %s AND doc_id = %s",
        [version.pk, "é"],
    )
    assert PoolVersion.objects.get(pk=version.pk)._rows_as_canonical() != stored.canonical
    problems = PoolVersion.objects.get(pk=version.pk).integrity_problems()
    assert len(problems) == 4 and all("(" in p and ", é) has grade" in p for p in problems)
    empty = pool_version_create(
        pool=Pool.objects.create(project=cast.alpha, name="Empty"), judgments=[],
        source=PoolVersionSource.IMPORTED, by=cast.owner,
    )  # fmt: skip
    assert PoolVersion.objects.get(pk=empty.pk)._rows_as_canonical() == "" == empty.canonical


def test_the_version_page_reports_tampering_loudly_and_refuses_exports(
    version: PoolVersion, cast: Cast, client: Client
) -> None:
    tamper("UPDATE annotator_pooljudgment SET grade = 0 WHERE version_id = %s AND doc_id = 'B'", [version.pk])
    client.force_login(cast.reviewer)
    kwargs = {"slug": cast.alpha.slug, "pool_id": version.pool_id, "version_id": version.pk}
    html = client.get(reverse("pool_version_detail", kwargs=kwargs)).content.decode()
    assert 'role="alert"' in html
    assert "Integrity check failed" in html
    assert "Stored row (q1, B) has grade 0, the hashed judgments say 2." in html
    # The version page itself, with 409: a script following redirects would read the page it was
    # sent to as a successful download.
    for part in ("", "data"):
        response = client.get(reverse("pool_version_export", kwargs=kwargs), {"format": "csv", "part": part})
        assert response.status_code == 409 and response["Content-Type"].startswith("text/html")
        assert "cannot be exported" in response.content.decode()
        assert "Stored row (q1, B) has grade 0" in response.content.decode()
    # No new version starts from it: the page offers none, and its form says that nothing was
    # made, and why.
    assert "Start a new version from this one" not in html
    assert "No new version can start from this one while it fails its integrity check." in html
    page = client.get(reverse("pool_version_continue", kwargs=kwargs)).content.decode()
    assert "No new version can start from this one: it failed its integrity check. Stored row (q1, B)" in page
    from annotator.models import GradingSet

    sets = GradingSet.objects.count()
    refused = client.post(
        reverse("pool_version_continue", kwargs=kwargs), {"name": "Next", "confirm": "on"}
    ).content.decode()
    assert "Nothing was created: this version failed its integrity check. Stored row (q1, B)" in refused
    assert GradingSet.objects.count() == sets
    # Nor scored, as the page says: no new comparison is computed and stored on it.
    from evaluation.comparisons import ComparisonInputError, comparison_create
    from evaluation.metrics import Settings
    from evaluation.models import Comparison
    from tests.factories import make_run

    a = make_run(cast.alpha, "a", {"q1": "AB"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "BA"}, by=cast.reviewer)
    with pytest.raises(
        ComparisonInputError, match="failed its integrity check and cannot be scored: Stored row"
    ):
        comparison_create(
            project=cast.alpha,
            pool_version=version,
            run_a=a,
            run_b=b,
            settings=Settings(k=2, missing_queries="zero"),
            by=cast.reviewer,
        )
    assert not Comparison.objects.exists()


def test_loaddata_cannot_rewrite_a_frozen_judgment(version: PoolVersion, tmp_path: object) -> None:
    import json
    from pathlib import Path

    from django.core.management import call_command
    from django.core.serializers import serialize

    judgment = version.judgments.order_by("pk").first()
    assert judgment is not None
    rows = json.loads(serialize("json", [judgment]))
    rows[0]["fields"]["grade"] = (judgment.grade + 1) % 4
    fixture = Path(str(tmp_path)) / "judgment.json"
    fixture.write_text(json.dumps(rows))
    with pytest.raises(PoolImmutableError, match="frozen"):
        call_command("loaddata", str(fixture), verbosity=0)
    assert_unchanged(version)


def test_a_consistent_rewrite_of_text_and_hash_shows_against_the_hash_comparisons_pinned(
    version: PoolVersion, cast: Cast, client: Client
) -> None:
    """Rewriting both the canonical text and its SHA-256 still fails the integrity check: the
    comparisons computed on it recorded the hash they saw."""
    from annotator.pools.models import canonical_serialisation
    from tests.factories import make_comparison, make_run

    a = make_run(cast.alpha, "a", {"q1": "AB", "q2": "C"}, by=cast.reviewer)
    b = make_run(cast.alpha, "b", {"q1": "BA", "q2": "C"}, by=cast.reviewer)
    make_comparison(cast.alpha, version, a, b, by=cast.reviewer, k=2)
    # Text, hash and row rewritten together: each agrees with the others.
    forged = canonical_serialisation([(q, d, 0 if d == "A" else g) for q, d, g, _source in JUDGMENTS])
    tamper(
        "UPDATE annotator_poolversion SET canonical = %s, sha256 = %s WHERE id = %s",
        [forged, hashlib.sha256(forged.encode()).hexdigest(), version.pk],
    )
    tamper("UPDATE annotator_pooljudgment SET grade = 0 WHERE version_id = %s AND doc_id = 'A'", [version.pk])
    assert PoolVersion.objects.get(pk=version.pk).integrity_problems() == [
        f"Comparisons computed on this version recorded its SHA-256 as {version.sha256[:12]}…, not "
        f"{hashlib.sha256(forged.encode()).hexdigest()[:12]}…: the version changed after they were computed."
    ]
    client.force_login(cast.reviewer)
    kwargs = {"slug": cast.alpha.slug, "pool_id": version.pool_id, "version_id": version.pk}
    html = client.get(reverse("pool_version_detail", kwargs=kwargs)).content.decode()
    assert "Integrity check failed" in html
    assert f"recorded its SHA-256 as {version.sha256[:12]}…" in html
    # ...and, as the page says, it is not exported (nor its manifest called intact).
    export = client.get(reverse("pool_version_export", kwargs=kwargs), {"format": "csv"})
    assert export.status_code == 409
    manifest = client.get(reverse("pool_version_manifest", kwargs=kwargs)).json()
    assert manifest["integrity"] != "ok"
