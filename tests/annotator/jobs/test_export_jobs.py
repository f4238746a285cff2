"""Exports of large versions and comparisons are prepared by a job; small ones download at once.

"Large" is set per test through JOB_INLINE_LIMITS["export"] (judgments of the pool version).
"""

from __future__ import annotations

import copy
import io
import zipfile
from typing import Any

import pytest
from django.db import transaction
from django.db.models import QuerySet
from django.test import Client
from django.urls import reverse

from annotator.jobs.models import Job, JobState
from annotator.models import PoolVersion
from annotator.pools.files import export_zip
from evaluation.exports import comparison_export
from evaluation.models import Comparison
from tests import factories
from tests.annotator.jobs.test_jobs import job_url, run_worker, worker_db
from tests.annotator.pools.test_immutability import tamper
from tests.conftest import Cast

GRADES = {"q1": {"d1": 3, "d2": 0}, "q2": {"d3": 2}}


@pytest.fixture
def exports_in_background(settings: Any) -> None:
    settings.JOB_INLINE_LIMITS = {**settings.JOB_INLINE_LIMITS, "export": 0}


def stored(version: PoolVersion) -> PoolVersion:
    """As a request reads it: PostgreSQL's jsonb orders the manifest's keys its own way."""
    return PoolVersion.objects.get(pk=version.pk)


def version_urls(version: PoolVersion) -> dict[str, str]:
    kwargs = {"slug": version.pool.project.slug, "pool_id": version.pool_id, "version_id": version.pk}
    return {
        name: reverse(f"pool_version_{name}", kwargs=kwargs) for name in ("detail", "export", "export_start")
    }


def download_of(client: Client, job: Job) -> Any:
    return client.get(reverse("job_download", kwargs={"slug": job.project.slug, "job_id": job.pk}))


@worker_db
def test_a_large_versions_export_is_a_job_whose_page_offers_the_same_zip(
    cast: Cast, client: Client, exports_in_background: None
) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    urls = version_urls(version)
    client.force_login(cast.reviewer)
    page = client.get(urls["detail"]).content.decode()
    assert urls["export_start"] in page and f"{urls['export']}?format=csv" not in page
    assert "prepared in the background" in page
    response = client.post(urls["export_start"], {"format": "csv"})
    job = Job.objects.get(kind="export_pool")
    assert response["Location"] == job_url(job) and job.state == JobState.QUEUED
    # The same export asked again while it waits is that job.
    assert client.post(urls["export_start"], {"format": "csv"})["Location"] == job_url(job)
    run_worker()
    job.refresh_from_db()
    name, expected = export_zip(stored(version), "csv")
    assert job.state == JobState.DONE and job.output_name == name and job.output_size == len(expected)
    page = client.get(job_url(job)).content.decode()
    assert f"Download {name}" in page and "is ready" in page
    download = download_of(client, job)
    assert download.status_code == 200 and download.content == expected
    assert download["Content-Type"] == "application/zip" and name in download["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(download.content)) as archive:
        assert sorted(archive.namelist()) == sorted([name.removesuffix("-csv.zip") + ".csv", "manifest.json"])


@worker_db
def test_the_data_file_alone_can_be_prepared_too(
    cast: Cast, client: Client, exports_in_background: None
) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    client.force_login(cast.reviewer)
    client.post(version_urls(version)["export_start"], {"format": "qrels", "part": "data"})
    run_worker()
    job = Job.objects.get(kind="export_pool")
    assert download_of(client, job).content.decode() == "q1 0 d1 3\nq1 0 d2 0\nq2 0 d3 2\n"


def test_a_get_of_a_large_versions_export_starts_nothing_and_says_why(
    cast: Cast, client: Client, exports_in_background: None
) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    client.force_login(cast.reviewer)
    response = client.get(version_urls(version)["export"] + "?format=csv")
    assert response.status_code == 409 and not Job.objects.exists()
    assert "3 judgments: its exports are prepared in the background" in response.content.decode()


def test_a_small_versions_export_downloads_at_once_and_a_post_runs_inline(cast: Cast, client: Client) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    urls = version_urls(version)
    client.force_login(cast.reviewer)
    assert client.get(urls["export"] + "?format=csv").content == export_zip(stored(version), "csv")[1]
    assert not Job.objects.exists()
    client.post(urls["export_start"], {"format": "jsonl"})
    job = Job.objects.get()
    assert (
        job.state == JobState.DONE
        and download_of(client, job).content == export_zip(stored(version), "jsonl")[1]
    )


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"format": "xlsx"}, "Unknown export format “xlsx”"),
        ({"format": "csv", "part": "all"}, "Unknown export part “all”"),
        ({"format": "qrels", "variant": "spreadsheet"}, "Unknown export variant “spreadsheet”"),
    ],
)
def test_a_bad_export_request_starts_no_job_and_says_what_is_allowed(
    cast: Cast, client: Client, exports_in_background: None, fields: dict[str, str], said: str
) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    client.force_login(cast.reviewer)
    response = client.post(version_urls(version)["export_start"], fields, follow=True)
    assert response.redirect_chain == [(version_urls(version)["detail"], 302)]
    assert said in response.content.decode() and not Job.objects.exists()


@worker_db
def test_a_version_whose_judgments_no_longer_match_its_hash_fails_the_export_job(
    cast: Cast, client: Client, exports_in_background: None
) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    client.force_login(cast.reviewer)
    client.post(version_urls(version)["export_start"], {"format": "csv"})
    with transaction.atomic():  # tamper's trigger bypass holds for one transaction
        tamper(
            "UPDATE annotator_pooljudgment SET grade = 1 WHERE version_id = %s AND doc_id = 'd2'",
            [version.pk],
        )
    run_worker()
    job = Job.objects.get()
    assert job.state == JobState.FAILED and job.output_data is None
    assert "failed its integrity check" in " ".join(job.errors)
    assert download_of(client, job).status_code == 404


def test_an_editor_and_another_project_cannot_download_an_export(cast: Cast, client: Client) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    client.force_login(cast.reviewer)
    client.post(version_urls(version)["export_start"], {"format": "csv"})
    job = Job.objects.get()
    client.force_login(cast.editor)
    assert download_of(client, job).status_code == 403
    assert client.post(version_urls(version)["export_start"], {"format": "csv"}).status_code == 403
    client.force_login(cast.outsider)  # owner of beta
    assert download_of(client, job).status_code == 404
    beta = reverse("job_download", kwargs={"slug": "beta", "job_id": job.pk})
    assert client.get(beta).status_code == 404


def test_a_job_without_a_file_has_nothing_to_download(cast: Cast, client: Client) -> None:
    job = Job.objects.create(project=cast.alpha, kind="freeze", started_by=cast.owner, state=JobState.DONE)
    client.force_login(cast.reviewer)
    assert download_of(client, job).status_code == 404


@worker_db
def test_a_large_comparisons_export_is_a_job_with_the_same_zip(
    cast: Cast, client: Client, exports_in_background: None
) -> None:
    comparison = factories.make_e9(cast.alpha, owner=cast.owner, reviewer=cast.reviewer)
    client.force_login(cast.reviewer)
    detail = client.get(comparison.get_absolute_url()).content.decode()
    start = reverse("comparison_export_start", kwargs={"slug": "alpha", "comparison_id": comparison.pk})
    assert start in detail and "Prepare the export" in detail
    refused = client.get(
        reverse("comparison_export", kwargs={"slug": "alpha", "comparison_id": comparison.pk})
    )
    assert refused.status_code == 409 and "prepared in the background" in refused.content.decode()
    response = client.post(start)
    job = Job.objects.get(kind="export_comparison")
    assert response["Location"] == job_url(job)
    run_worker()
    name, expected = comparison_export(comparison=Comparison.objects.get(pk=comparison.pk))
    download = download_of(client, job)
    assert download.content == expected and name in download["Content-Disposition"]
    client.force_login(cast.editor)
    assert download_of(client, job).status_code == 403


def test_a_chinese_speaker_reads_the_export_jobs_result_in_chinese(cast: Cast, client: Client) -> None:
    version = factories.make_pool(cast.alpha, GRADES, by=cast.owner)
    client.force_login(cast.reviewer)
    client.post(version_urls(version)["export_start"], {"format": "csv"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    page = client.get(job_url(Job.objects.get()), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "状态：" in page and "下载" in page and "已就绪" in page


@worker_db
def test_checking_a_large_comparison_is_a_job_that_says_the_numbers_were_reproduced(
    cast: Cast, client: Client, settings: Any
) -> None:
    settings.JOB_INLINE_LIMITS = {**settings.JOB_INLINE_LIMITS, "compare": 0}
    comparison = factories.make_e9(cast.alpha, owner=cast.owner, reviewer=cast.reviewer)
    client.force_login(cast.reviewer)
    verify = reverse("comparison_verify", kwargs={"slug": "alpha", "comparison_id": comparison.pk})
    response = client.post(verify)
    job = Job.objects.get(kind="verify_comparison")
    assert response["Location"] == job_url(job) and job.state == JobState.QUEUED
    htmx = client.post(verify, headers={"HX-Request": "true"})  # the same check: that job, a full page
    assert htmx["HX-Redirect"] == job_url(job) and Job.objects.count() == 1
    run_worker()
    page = client.get(job_url(job)).content.decode()
    assert "every stored number is identical to the last digit" in page
    assert comparison.get_absolute_url() in page


@worker_db
def test_a_check_on_the_worker_reports_a_changed_stored_number(
    cast: Cast, client: Client, settings: Any
) -> None:
    settings.JOB_INLINE_LIMITS = {**settings.JOB_INLINE_LIMITS, "compare": 0}
    comparison = factories.make_e9(cast.alpha, owner=cast.owner, reviewer=cast.reviewer)
    results = copy.deepcopy(comparison.results)
    results["systems"][0]["metrics"]["ndcg"]["per_query"]["ndcg"] = [0.5]
    # Only a corrupted database can do this: the model refuses the change, so go under it.
    QuerySet.update(Comparison.objects.filter(pk=comparison.pk), results=results)
    client.force_login(cast.reviewer)
    client.post(reverse("comparison_verify", kwargs={"slug": "alpha", "comparison_id": comparison.pk}))
    run_worker()
    job = Job.objects.get()
    assert job.state == JobState.DONE and job.result["level"] == "error"
    assert "Recomputing did NOT reproduce the stored numbers" in client.get(job_url(job)).content.decode()
