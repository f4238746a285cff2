"""No input may produce a 500: every view, as the most powerful role, with junk in every parameter."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import URLPattern, reverse

from annotator.converters import MAX_ID
from tests.annotator.test_access_matrix import ALL_PATTERNS, PATTERN_IDS
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
