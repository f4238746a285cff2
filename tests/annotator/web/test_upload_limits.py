"""Every upload form refuses a file over its kind's limit (settings.UPLOAD_LIMITS) before reading
it, naming the limit and the command that has none; the commands themselves take any size."""

from __future__ import annotations

import html
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.template.defaultfilters import filesizeformat
from django.test import Client
from django.urls import reverse

from annotator.models import Candidate, Document, GradingSet, Pool, Query
from annotator.settings import env_megabytes
from annotator.web.uploads import UNLIMITED_COMMANDS
from evaluation.models import Run
from tests.benchmarks.upload_data import PATHS, add_run_ids
from tests.conftest import Cast

LIMIT = 3000

# One upload path per kind of limit, and what it would have stored.
KINDS = {
    "documents": ("documents (JSONL)", lambda cast: Document.objects.filter(project=cast.alpha).exists()),
    "queries": ("queries (CSV)", lambda cast: Query.objects.filter(project=cast.alpha).exists()),
    "candidates": ("candidates (TREC)", lambda cast: Candidate.objects.exists()),
    "runs": ("run (TREC)", lambda cast: Run.objects.filter(project=cast.alpha).exists()),
    "pools": ("pool (qrels)", lambda cast: Pool.objects.filter(project=cast.alpha).exists()),
}


@pytest.fixture
def small_limits(settings: Any) -> None:
    settings.UPLOAD_LIMITS = dict.fromkeys(settings.UPLOAD_LIMITS, LIMIT)


def _post(cast: Cast, kind: str, files: list[bytes]) -> str:
    path = PATHS[KINDS[kind][0]]
    client = Client()
    client.force_login(cast.owner)
    fields = dict(path.fields)
    if kind == "candidates":
        fields["grading_set"] = GradingSet.objects.create(project=cast.alpha, name="Limits").pk
        for data in files:
            if len(data) <= LIMIT:  # the refusal reads no file: no IDs needed
                add_run_ids(cast.alpha, data, path.file_name)
    uploads = [SimpleUploadedFile(f"{i}-{path.file_name}", data) for i, data in enumerate(files)]
    fields[path.field] = uploads if kind == "candidates" else uploads[0]
    response = client.post(reverse(path.url, kwargs={"slug": "alpha"}), fields, follow=True)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_over_the_limit_is_refused_naming_the_limit_and_the_command(
    cast: Cast, small_limits: None, kind: str
) -> None:
    path = PATHS[KINDS[kind][0]]
    page = _post(cast, kind, [path.make(LIMIT + 2000)[: LIMIT + 1]])
    assert filesizeformat(LIMIT) in page
    assert f"The command line has no limit: {UNLIMITED_COMMANDS[kind]}." in page
    assert not KINDS[kind][1](cast)


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_at_the_limit_is_read(cast: Cast, small_limits: None, kind: str) -> None:
    path = PATHS[KINDS[kind][0]]
    data = path.make(LIMIT)
    assert len(data) <= LIMIT
    page = _post(cast, kind, [data])
    assert "The command line has no limit" not in page
    assert KINDS[kind][1](cast)


def test_the_refusal_comes_before_the_file_is_read(cast: Cast, small_limits: None) -> None:
    """A file over the limit is refused by its size alone: its bytes (here not UTF-8) are not read."""
    page = _post(cast, "runs", [b"\xff" * (LIMIT + 1)])
    assert "The command line has no limit" in page
    assert "UTF-8" not in page


def test_the_files_of_one_candidates_upload_count_together(cast: Cast, small_limits: None) -> None:
    half = PATHS["candidates (TREC)"].make(LIMIT // 2 + 100)
    assert LIMIT // 2 < len(half) <= LIMIT
    page = _post(cast, "candidates", [half, half])
    assert "These files are" in page and filesizeformat(2 * len(half)) in page
    assert "manage.py import_candidates" in page
    assert not Candidate.objects.exists()


def test_the_import_commands_have_no_limit(cast: Cast, small_limits: None, tmp_path: Path) -> None:
    documents = tmp_path / "d.jsonl"
    documents.write_bytes(PATHS["documents (JSONL)"].make(3 * LIMIT))
    call_command("import_documents", "alpha", str(documents), stdout=io.StringIO(), stderr=io.StringIO())
    assert Document.objects.filter(project=cast.alpha).count() > 1


def test_a_limit_is_set_in_whole_megabytes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DJANGO_UPLOAD_LIMIT_MB_RUNS", "5")
    assert env_megabytes("DJANGO_UPLOAD_LIMIT_MB_RUNS", 200) == 5 * 1024 * 1024
    monkeypatch.setenv("DJANGO_UPLOAD_LIMIT_MB_RUNS", "")
    assert env_megabytes("DJANGO_UPLOAD_LIMIT_MB_RUNS", 200) == 200 * 1024 * 1024
    for wrong in ("0", "-1", "1.5", "20MB", "٣"):
        monkeypatch.setenv("DJANGO_UPLOAD_LIMIT_MB_RUNS", wrong)
        with pytest.raises(ImproperlyConfigured, match="DJANGO_UPLOAD_LIMIT_MB_RUNS must be a whole number"):
            env_megabytes("DJANGO_UPLOAD_LIMIT_MB_RUNS", 200)
