"""Jobs: large imports and freezes run on a worker, all or nothing, watched on the job's page.

The worker here is django-tasks-db's own (`db_worker --batch`), in this process; a worker in its
own process, killed mid-job, is in test_worker_process.py. Tests that run the worker commit their
data (transaction=True): in a worker, progress is written on a second connection (PostgreSQL).
"""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import connection, connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotator.documents import jobs as documents_jobs
from annotator.jobs.models import Job, JobState
from annotator.jobs.services import (
    JobStopped,
    Progress,
    job_cancel,
    job_complete,
    jobs_fail_stalled,
)
from annotator.jobs.start import job_start
from annotator.models import Document, PoolVersion
from tests import factories
from tests.conftest import Cast

worker_db = pytest.mark.django_db(transaction=True, databases="__all__")
DOCS = "doc_id,title,body\nA,Title A,Body A\nB,Title B,Body B\nC,Title C,Body C\n"
PHONE = {("q1", "d1"): (3, 3), ("q1", "d2"): (1, 1), ("q2", "d3"): (0, 0)}


@pytest.fixture
def background(settings: Any) -> None:
    """Every import and freeze goes to the worker, whatever its size."""
    settings.JOB_INLINE_LIMITS = {**settings.JOB_INLINE_LIMITS, "import": 0, "freeze": 0}


def run_worker() -> None:
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval", "0", verbosity=0)


def post_import(client: Client, text: str, name: str = "docs.csv", **extra: str) -> Any:
    upload = SimpleUploadedFile(name, text.encode(), content_type="text/csv")
    return client.post(
        reverse("import_documents", kwargs={"slug": "alpha"}), {"file": upload, "format": "", **extra}
    )


def job_url(job: Job) -> str:
    return reverse("job_detail", kwargs={"slug": job.project.slug, "job_id": job.pk})


@worker_db
def test_a_large_import_is_queued_then_stored_by_the_worker_and_its_page_says_what_it_did(
    cast: Cast, client: Client, background: None
) -> None:
    client.force_login(cast.owner)
    response = post_import(client, DOCS)
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == job_url(job)
    assert job.state == JobState.QUEUED and job.input_name == "docs.csv" and job.started_by == cast.owner
    assert not Document.objects.exists()
    page = client.get(job_url(job)).content.decode()
    assert "Queued" in page and 'hx-trigger="every 1s"' in page and 'http-equiv="refresh"' in page

    run_worker()

    job.refresh_from_db()
    assert job.state == JobState.DONE and job.input_data is None
    assert (job.done, job.total) == (3, 3)
    assert sorted(Document.objects.values_list("external_id", flat=True)) == ["A", "B", "C"]
    page = client.get(job_url(job)).content.decode()
    assert "Documents: created 3, updated 0, unchanged 0." in page
    assert reverse("document_list", kwargs={"slug": "alpha"}) in page
    assert "hx-trigger" not in page and "http-equiv" not in page  # nothing left to watch
    assert "Document import" in client.get(reverse("job_list", kwargs={"slug": "alpha"})).content.decode()


@worker_db
def test_a_bad_file_fails_on_the_worker_with_the_line_numbered_errors_and_stores_nothing(
    cast: Cast, client: Client, background: None
) -> None:
    client.force_login(cast.owner)
    post_import(client, "doc_id,title,body\nA,Title A,Body A\n,No id,Body\n")
    run_worker()
    job = Job.objects.get()
    assert job.state == JobState.FAILED and not Document.objects.exists()
    assert job.errors and "line 3" in job.errors[0].lower()
    page = client.get(job_url(job)).content.decode()
    assert "Nothing of it was stored" in page and job.errors[0] in page


@worker_db
def test_the_same_file_sent_again_while_queued_is_that_job_and_imports_once(
    cast: Cast, client: Client, background: None
) -> None:
    client.force_login(cast.owner)
    post_import(client, DOCS)
    response = post_import(client, DOCS, name="again.csv")
    job = Job.objects.get()
    assert response["Location"] == job_url(job)
    assert "already being imported" in client.get(job_url(job)).content.decode()
    run_worker()
    assert Document.objects.count() == 3 and Job.objects.get().state == JobState.DONE
    # Once it ended, the same file is a new job.
    post_import(client, DOCS)
    assert Job.objects.count() == 2


@worker_db
def test_a_job_cancelled_while_queued_never_runs(cast: Cast, client: Client, background: None) -> None:
    client.force_login(cast.owner)
    post_import(client, DOCS)
    job = Job.objects.get()
    response = client.post(reverse("job_cancel", kwargs={"slug": "alpha", "job_id": job.pk}))
    assert response.status_code == 302
    run_worker()
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED and not Document.objects.exists()
    assert "Cancelled. Nothing of it was stored." in client.get(job_url(job)).content.decode()
    # Cancelling an ended job says so and changes nothing.
    follow = client.post(reverse("job_cancel", kwargs={"slug": "alpha", "job_id": job.pk}), follow=True)
    assert "had already ended" in follow.content.decode()


@worker_db
def test_a_job_cancelled_while_it_stores_rolls_back_everything(
    cast: Cast, client: Client, background: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = documents_jobs.documents_import

    def store_then_cancel(**kwargs: Any) -> Any:
        summary = store(**kwargs)  # every row written, in the job's transaction
        if connection.vendor == "postgresql":  # the request comes from another session, which commits
            other = threading.Thread(target=lambda: (job_cancel(Job.objects.get()), connections.close_all()))
            other.start()
            other.join()
        else:  # one writer at a time: on SQLite no other session can write until the job commits
            job_cancel(Job.objects.get())
        kwargs["on_progress"](3, 3)  # the next report sees the request
        return summary

    monkeypatch.setattr(documents_jobs, "documents_import", store_then_cancel)
    client.force_login(cast.owner)
    post_import(client, DOCS)
    run_worker()
    assert Job.objects.get().state == JobState.CANCELLED
    assert not Document.objects.exists()


@worker_db
def test_an_unexpected_error_fails_the_job_with_a_plain_message_and_stores_nothing(
    cast: Cast, client: Client, background: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = documents_jobs.documents_import

    def store_then_crash(**kwargs: Any) -> Any:
        store(**kwargs)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(documents_jobs, "documents_import", store_then_crash)
    client.force_login(cast.owner)
    post_import(client, DOCS)
    run_worker()
    job = Job.objects.get()
    assert job.state == JobState.FAILED and not Document.objects.exists()
    page = client.get(job_url(job)).content.decode()
    assert "unexpected error" in page and "disk on fire" not in page


@worker_db
def test_a_large_freeze_runs_on_the_worker_and_links_to_the_version(
    cast: Cast, client: Client, background: None
) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE)
    client.force_login(cast.reviewer)
    url = reverse("pool_freeze", kwargs={"slug": "alpha", "set_id": grading_set.pk})
    response = client.post(url, {"confirm": "on"})
    job = Job.objects.get(kind="freeze")
    assert response["Location"] == job_url(job) and not PoolVersion.objects.exists()
    # A second freeze of the same set while the first waits is that job.
    assert client.post(url, {"confirm": "on"})["Location"] == job_url(job)
    run_worker()
    version = PoolVersion.objects.get()
    page = client.get(job_url(job)).content.decode()
    assert "Frozen as Set version 1" in page
    assert (
        reverse(
            "pool_version_detail",
            kwargs={"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk},
        )
        in page
    )


@worker_db
def test_a_freeze_refused_on_the_worker_says_why(cast: Cast, client: Client, background: None) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), {("q1", "d1"): (3, 1)})
    client.force_login(cast.reviewer)
    client.post(reverse("pool_freeze", kwargs={"slug": "alpha", "set_id": grading_set.pk}), {"confirm": "on"})
    run_worker()
    job = Job.objects.get()
    assert job.state == JobState.FAILED and job.errors and not PoolVersion.objects.exists()


def test_small_work_runs_in_the_request_through_the_same_job(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    response = post_import(client, DOCS)
    assert response["Location"] == reverse("import_page", kwargs={"slug": "alpha"})
    job = Job.objects.get()
    assert job.state == JobState.DONE and Document.objects.count() == 3


def test_a_running_job_whose_worker_went_silent_is_failed_and_cannot_commit_later(
    cast: Cast, client: Client, settings: Any
) -> None:
    job = Job.objects.create(
        project=cast.alpha,
        kind="import_documents",
        started_by=cast.owner,
        state=JobState.RUNNING,
        params={"records": "documents", "format": "csv"},
        heartbeat_at=timezone.now() - timedelta(seconds=settings.JOB_STALL_SECONDS + 5),
    )
    assert jobs_fail_stalled() == 1
    job.refresh_from_db()
    assert job.state == JobState.FAILED
    client.force_login(cast.reviewer)
    assert "no sign of life for 15 minutes" in client.get(job_url(job)).content.decode()
    # The hung body, when it wakes, is refused: its transaction rolls back.
    from django.db import transaction

    with pytest.raises(JobStopped), transaction.atomic():
        job_complete(job, {"summary": {}})
    with pytest.raises(JobStopped):
        Progress(job).report(1, 2)


def test_the_job_pages_show_progress_rate_and_time_left(cast: Cast, client: Client) -> None:
    started = timezone.now() - timedelta(seconds=10)
    job = Job.objects.create(
        project=cast.alpha,
        kind="import_documents",
        started_by=cast.owner,
        state=JobState.RUNNING,
        params={"records": "documents", "format": "csv"},
        stage="saving",
        done=500,
        total=1500,
        started_at=started,
        heartbeat_at=timezone.now(),
        input_name="big.csv",
    )
    client.force_login(cast.reviewer)
    page = client.get(job_url(job), headers={"HX-Request": "true"}).content.decode()
    assert page.lstrip().startswith('<section id="job-status"')  # the partial alone
    assert "500 of 1,500 documents (33%)" in page and "Storing" in page
    assert "50 documents per second" in page and "about 20 seconds left" in page
    client.force_login(cast.editor)
    assert client.get(job_url(job)).status_code == 403  # editors do not see the project's jobs


def test_a_job_of_another_project_is_not_found(cast: Cast, client: Client) -> None:
    job, _ = job_start(
        project=cast.alpha,
        kind="import_documents",
        by=cast.owner,
        params={"records": "documents", "format": "csv"},
    )
    client.force_login(cast.outsider)  # owner of beta
    assert client.get(reverse("job_detail", kwargs={"slug": "beta", "job_id": job.pk})).status_code == 404
    assert client.post(reverse("job_cancel", kwargs={"slug": "beta", "job_id": job.pk})).status_code == 404
    assert Job.objects.get(pk=job.pk).state == JobState.QUEUED


def test_the_jobs_page_is_empty_with_a_word_on_what_appears_there(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    page = client.get(reverse("job_list", kwargs={"slug": "alpha"})).content.decode()
    assert "No jobs yet." in page


def test_a_chinese_speaker_reads_the_job_in_chinese(cast: Cast, client: Client) -> None:
    client.force_login(cast.owner)
    client.cookies["django_language"] = "zh-hans"
    post_import(client, DOCS)
    job = Job.objects.get()
    assert job.params["language"] == "zh-hans"
    page = client.get(job_url(job)).content.decode()
    assert '<span class="job-state job-state-done">已完成</span>' in page
    assert "文档：新建 3" in page


@worker_db
def test_a_large_judgments_import_runs_on_the_worker(cast: Cast, client: Client, background: None) -> None:
    client.force_login(cast.owner)
    qrels = SimpleUploadedFile("round.qrels", b"q1 0 d1 3\nq1 0 d2 0\nq2 0 d3 1\n")
    response = client.post(
        reverse("pool_import", kwargs={"slug": "alpha"}),
        {"file": qrels, "format": "auto", "pool_name": "Round"},
    )
    job = Job.objects.get(kind="import_judgments")
    assert response["Location"] == job_url(job) and not PoolVersion.objects.exists()
    run_worker()
    version = PoolVersion.objects.get()
    assert version.counts["judgments"] == 3 and version.pool.name == "Round"
    assert "Imported round.qrels as Round version 1: 3 judgments" in client.get(job_url(job)).content.decode()


@worker_db
def test_a_large_run_upload_checked_against_a_version_runs_on_the_worker(
    cast: Cast, client: Client, background: None
) -> None:
    from evaluation.models import Run

    version = factories.make_pool(cast.alpha, {"q1": {"d1": 3, "d2": 0}}, by=cast.owner)
    client.force_login(cast.reviewer)
    data = {
        "name": "bm25",
        "format": "auto",
        "file": SimpleUploadedFile("bm25.trec", b"q1 Q0 d1 1 2.0 bm25\nq1 Q0 d9 2 1.0 bm25\n"),
        "check_against": version.pk,
        "k": 10,
        "unjudged": "error",
        "ties": "docid-desc",
        "missing_queries": "zero",
        "extra_queries": "error",
    }
    response = client.post(reverse("run_upload", kwargs={"slug": "alpha"}), data)
    job = Job.objects.get(kind="upload_run")
    assert response["Location"] == job_url(job)
    run_worker()
    job.refresh_from_db()
    # d9 is not judged in the version, and the policy says unjudged is an error: refused, nothing stored.
    assert job.state == JobState.FAILED and "d9" in job.errors[0] and not Run.objects.exists()
    data["unjudged"] = "zero"
    data["file"] = SimpleUploadedFile("bm25.trec", b"q1 Q0 d1 1 2.0 bm25\nq1 Q0 d9 2 1.0 bm25\n")
    client.post(reverse("run_upload", kwargs={"slug": "alpha"}), data)
    run_worker()
    run = Run.objects.get()
    job = Job.objects.filter(kind="upload_run").first()
    assert job is not None and job.state == JobState.DONE
    page = client.get(job_url(job)).content.decode()
    assert "Run “bm25” uploaded" in page and run.get_absolute_url() in page


@worker_db
def test_candidates_pooled_from_several_large_runs_on_the_worker(
    cast: Cast, client: Client, background: None
) -> None:
    grading_set = factories.make_set(cast.alpha)
    factories.make_query(cast.alpha, "q1")
    for doc in "ABCD":
        factories.make_document(cast.alpha, doc)
    runs = [
        SimpleUploadedFile("bm25.trec", b"q1 Q0 B 1 9 bm25\nq1 Q0 A 2 8 bm25\n"),
        SimpleUploadedFile("dense.csv", b"query_id,doc_id,rank\nq1,D,1\nq1,C,2\n"),
    ]
    client.force_login(cast.owner)
    response = client.post(
        reverse("import_candidates", kwargs={"slug": "alpha"}),
        {"grading_set": grading_set.pk, "files": runs, "depth": "1"},
    )
    job = Job.objects.get(kind="pool_candidates")
    assert response["Location"] == job_url(job) and job.input_name == "bm25.trec, dense.csv"
    run_worker()
    assert sorted(grading_set.candidates.values_list("document__external_id", flat=True)) == ["B", "D"]
    page = client.get(job_url(job)).content.decode()
    assert "Candidates: added 2, already in the set 0." in page
    assert reverse("grading_set_detail", kwargs={"slug": "alpha", "set_id": grading_set.pk}) in page


@worker_db
def test_a_large_comparison_is_computed_on_the_worker_and_a_refusal_names_each_run(
    cast: Cast, client: Client, settings: Any
) -> None:
    from evaluation.models import Comparison

    settings.JOB_INLINE_LIMITS = {**settings.JOB_INLINE_LIMITS, "import": 0, "freeze": 0, "compare": 0}
    version = factories.make_pool(cast.alpha, factories.E9_POOL, by=cast.owner)
    a = factories.make_run(cast.alpha, "a", {"q1": "AXB"}, by=cast.reviewer)
    b = factories.make_run(cast.alpha, "b", {"q1": "BAY"}, by=cast.reviewer)
    form = {"pool_version": version.pk, "run_a": a.pk, "run_b": b.pk, "k": 3, "gain": "linear"}
    form |= {"unjudged": "error", "zero_idcg": "zero", "ties": "error", "seed": 0}
    form |= {"missing_queries": "zero", "extra_queries": "error"}
    client.force_login(cast.reviewer)
    client.post(reverse("comparison_create", kwargs={"slug": "alpha"}), form)
    run_worker()
    refused = Job.objects.get(kind="create_comparison")
    assert refused.state == JobState.FAILED and not Comparison.objects.exists()
    assert [field for field, _message in refused.result["problems"]] == ["run_a", "run_b"]
    assert "“X”" in refused.errors[0] and "“Y”" in refused.errors[1]

    response = client.post(
        reverse("comparison_create", kwargs={"slug": "alpha"}), {**form, "unjudged": "zero"}
    )
    job = Job.objects.filter(kind="create_comparison").first()
    assert job is not None and response["Location"] == job_url(job)
    run_worker()
    comparison = Comparison.objects.get()
    page = client.get(job_url(job)).content.decode()
    assert f"Comparison “{comparison.name}” computed and saved." in page
    assert comparison.get_absolute_url() in page
