"""No input may produce a 500: every view, as the most powerful role, with junk in every parameter."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from annotator.web.converters import MAX_ID
from tests.annotator.web.test_access_matrix import ALL_PATTERNS, PATTERN_IDS
from tests.conftest import Cast
from tests.samples import sample_kwargs

JUNK = {
    "page": "-1'; DROP TABLE x;--",
    "k": "0",
    "gain": "cubic",
    "query": "no-such-query",
    "q": "%" * 300,
    "sort": "../../etc/passwd",
    "filter": "🙂",
    "format": "exe",
    "set": "abc",
    "grade": "4",
    "value": "1.5",
    "role": "emperor",
    "username": "x" * 500,
    "version": "-3",
    "other": "NaN",
    "next": "https://evil.example.com/",
}


@pytest.mark.parametrize(("name", "pattern", "params"), ALL_PATTERNS, ids=PATTERN_IDS)
def test_no_view_answers_junk_parameters_with_a_server_error(
    cast: Cast, client: Client, name: str, pattern: URLPattern, params: frozenset[str]
) -> None:
    url = reverse(name, kwargs={k: v for k, v in sample_kwargs(cast.alpha).items() if k in params})
    client.force_login(cast.owner)
    assert client.get(url, JUNK).status_code < 500
    assert client.post(url, JUNK).status_code < 500
    assert client.post(url, JUNK, headers={"HX-Request": "true"}).status_code < 500


@pytest.mark.parametrize(("name", "pattern", "params"), ALL_PATTERNS, ids=PATTERN_IDS)
def test_a_nul_character_in_any_parameter_is_a_clear_400(
    cast: Cast, client: Client, name: str, pattern: URLPattern, params: frozenset[str]
) -> None:
    # PostgreSQL refuses NUL in text: unguarded, it would become a database error.
    url = reverse(name, kwargs={k: v for k, v in sample_kwargs(cast.alpha).items() if k in params})
    client.force_login(cast.owner)
    nul = {key: f"a\u0000{value}" for key, value in JUNK.items()}
    for response in (client.get(url, nul), client.post(url, nul)):
        assert response.status_code == 400
        assert "contains a NUL character" in response.content.decode()


ID_PATTERNS = [entry for entry in ALL_PATTERNS if any(param.endswith("_id") for param in entry[2])]


@pytest.mark.parametrize(("name", "pattern", "params"), ID_PATTERNS, ids=[e[0] for e in ID_PATTERNS])
@pytest.mark.parametrize("huge", [str(MAX_ID), str(MAX_ID + 1), "9" * 22])
def test_an_id_no_database_column_can_hold_is_a_404(
    cast: Cast, client: Client, name: str, pattern: URLPattern, params: frozenset[str], huge: str
) -> None:
    # SQLite raises OverflowError for an integer beyond 64 bits; the <id:...> converter stops it.
    client.force_login(cast.owner)
    kwargs = {k: v for k, v in sample_kwargs(cast.alpha).items() if k in params}
    ids = [k for k in kwargs if k.endswith("_id")]
    assert ids, f"{name} has no ID parameter"
    for key in ids:
        sentinel = 7_777_777_777
        url = reverse(name, kwargs=kwargs | {key: sentinel}).replace(str(sentinel), huge)
        # 405 for the method a view does not take; the method it takes must find nothing.
        # (follow: a POST-only action's GET goes to its page, which must not be found either)
        statuses = {client.get(url, follow=True).status_code, client.post(url, {"grade": "2"}).status_code}
        assert statuses in ({404}, {404, 405}), (url, statuses)


# ---- Posts beyond Django's limits ----------------------------------------------------------------


def _no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info], "a refused post logged a traceback"


def test_more_files_than_django_reads_get_a_page_saying_the_limit_and_nothing_is_imported(
    cast: Cast, client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Too many run files on the candidates import get a page saying so, not Django's bare 400
    and a traceback in the log."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from annotator.models import Candidate

    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 3
    client.force_login(cast.owner)
    files = [SimpleUploadedFile(f"run{i}.trec", b"q1 Q0 A 1 1 r\n") for i in range(4)]
    response = client.post(
        reverse("import_candidates", kwargs={"slug": "alpha"}),
        {"files": files},
        HTTP_REFERER="http://testserver/p/alpha/imports/",
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert "More than 3 files were sent at once. Nothing was saved: send them in groups of at most 3." in html
    assert (
        'href="http://testserver/p/alpha/imports/"' in html and "olivia" in html
    )  # a page of the app, signed in
    assert not Candidate.objects.exists()
    _no_traceback(caplog)


def test_a_form_larger_than_the_limit_is_a_413_naming_it_and_htmx_gets_the_sentence_in_place(
    cast: Cast, client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    from evaluation.models import Run

    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    client.force_login(cast.reviewer)
    url = reverse("run_upload", kwargs={"slug": "alpha"})
    data = {"name": "big", "format": "lists", "text": "q1: " + ", ".join(f"d{i}" for i in range(500))}
    response = client.post(url, data)
    assert response.status_code == 413
    assert "larger than the 1000\xa0bytes one form may carry" in response.content.decode()
    fragment = client.post(url, data, headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and fragment["HX-Retarget"] == "#messages"
    assert b"<html" not in fragment.content and b'role="alert"' in fragment.content
    assert not Run.objects.exists()
    _no_traceback(caplog)


def test_too_many_fields_and_an_unreadable_upload_are_400s_that_say_so(
    cast: Cast, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    client.force_login(cast.owner)
    url = reverse("import_documents", kwargs={"slug": "alpha"})
    fields = {f"f{i}": "x" for i in range(1100)}
    response = client.post(url, fields)
    assert response.status_code == 400 and "more than 1000 fields" in response.content.decode()
    # A part's headers longer than Django reads (1 KB: here a 5,000-character file name, which the
    # test client would shorten, so the body is written by hand).
    body = (
        '--B\r\nContent-Disposition: form-data; name="file"; filename="' + "d" * 5000 + '.csv"\r\n'
        "Content-Type: text/csv\r\n\r\ndoc_id,title,body\r\n--B--\r\n"
    )
    response = client.post(url, body, content_type="multipart/form-data; boundary=B")
    assert response.status_code == 400
    assert "The upload could not be read" in response.content.decode()
    _no_traceback(caplog)
