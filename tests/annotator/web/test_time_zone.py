"""Times are shown in the reader's time zone (the browser's, by cookie), and the footer says which."""

from __future__ import annotations

import datetime

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import CriteriaVersion
from tests.conftest import Cast


def _criteria_page(client: Client) -> str:
    return client.get(reverse("criteria", kwargs={"slug": "alpha"})).content.decode()


def test_times_follow_the_browsers_time_zone(cast: Cast, client: Client) -> None:
    version = CriteriaVersion.objects.current_for(cast.alpha)
    CriteriaVersion.objects.filter(pk=version.pk).update(
        created_at=datetime.datetime(2026, 11, 30, 10, 31, tzinfo=datetime.UTC)
    )
    client.force_login(cast.owner)
    utc = _criteria_page(client)
    assert "2026-11-30 10:31" in utc and "Times are shown in the time zone UTC." in utc
    client.cookies["tz"] = "Asia/Shanghai"
    beijing = _criteria_page(client)
    assert "2026-11-30 18:31" in beijing and "10:31" not in beijing
    assert "Times are shown in the time zone Asia/Shanghai." in beijing


@pytest.mark.parametrize(
    "cookie", ["Nowhere/Atall", "../../etc/passwd", "/etc/localtime", "x" * 500, "Asia", ""]
)
def test_an_unknown_time_zone_is_ignored(cast: Cast, client: Client, cookie: str) -> None:
    client.force_login(cast.owner)
    client.cookies["tz"] = cookie
    response = client.get(reverse("criteria", kwargs={"slug": "alpha"}))
    assert response.status_code == 200
    assert "Times are shown in the time zone UTC." in response.content.decode()
