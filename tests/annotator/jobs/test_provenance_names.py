"""Provenance names the uploaded file and its uploader, never a path on the server, also for an
import that ran as a background job."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotator.jobs.models import Job
from annotator.jobs.start import job_start
from annotator.models import PoolVersion
from tests.conftest import Cast

worker_db = pytest.mark.django_db(transaction=True, databases="__all__")
SERVER_PATH = "/srv/ranking-lab/job-inputs/2026/round.qrels"


@worker_db
def test_a_background_import_records_the_file_name_and_uploader_not_a_server_path(
    cast: Cast, client: Client
) -> None:
    job, started = job_start(
        project=cast.alpha,
        kind="import_judgments",
        by=cast.owner,
        params={"format": "qrels", "pool_id": None, "pool_name": "Round", "grade_map": []},
        data=b"q1 0 d1 3\nq1 0 d2 0\n",
        name=SERVER_PATH,
    )
    assert started and Job.objects.get(pk=job.pk).input_name == "round.qrels"
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval", "0", verbosity=0)
    job.refresh_from_db()
    assert job.state == "done", job.errors
    version = PoolVersion.objects.get()
    imported = version.provenance["imported"]
    assert (imported["file_name"], imported["uploaded_by"]) == ("round.qrels", cast.owner.get_username())
    assert version.file_name == "round.qrels"
    client.force_login(cast.owner)
    kwargs = {"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk}
    page = client.get(reverse("pool_version_detail", kwargs=kwargs)).content.decode()
    manifest = client.get(reverse("pool_version_manifest", kwargs=kwargs))
    job_page = client.get(reverse("job_detail", kwargs={"slug": "alpha", "job_id": job.pk})).content.decode()
    for text in (page, manifest.content.decode(), job_page, json.dumps(version.provenance)):
        assert "/srv/" not in text and "job-inputs" not in text
    assert "round.qrels" in page


@pytest.mark.django_db
def test_the_manifest_link_downloads_a_named_file(cast: Cast, client: Client) -> None:
    from tests import factories

    version = factories.make_pool(cast.alpha, {"q1": {"d1": 3}}, by=cast.owner)
    client.force_login(cast.owner)
    kwargs = {"slug": "alpha", "pool_id": version.pool_id, "version_id": version.pk}
    response = client.get(reverse("pool_version_manifest", kwargs=kwargs))
    assert response.status_code == 200 and response.json()["integrity"] == "ok"
    assert response["Content-Disposition"].startswith("attachment; filename=")
    assert response["Content-Disposition"].endswith(f'-v{version.number}-manifest.json"')
    # A plain link: the attachment header makes it a download (a refusal would still show).
    page = client.get(reverse("pool_version_detail", kwargs=kwargs)).content.decode()
    assert f'href="{reverse("pool_version_manifest", kwargs=kwargs)}"' in page
