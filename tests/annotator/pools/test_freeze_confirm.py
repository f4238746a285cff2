"""The freeze confirmation asks in the app's language: no browser `required` bubble, the server's
message instead."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import PoolVersion
from tests import factories
from tests.annotator.grading.accessible import Page
from tests.conftest import Cast

pytestmark = pytest.mark.django_db
PHONE = {("q1", "d1"): (3, 3), ("q1", "d2"): (1, 1)}


def test_an_unticked_freeze_confirmation_is_refused_by_the_server_in_the_apps_language(
    cast: Cast, client: Client
) -> None:
    grading_set = factories.graded_set(cast.alpha, (cast.editor, cast.editor2), PHONE)
    client.force_login(cast.reviewer)
    client.cookies["django_language"] = "zh-hans"
    url = reverse("pool_freeze", kwargs={"slug": "alpha", "set_id": grading_set.pk})
    page = Page(client.get(url).content.decode())
    confirm = page.controls("input", type="checkbox", name="confirm")[0]
    # The browser would answer an empty required box in its own language: the server answers.
    assert "required" not in confirm.attrs and confirm.attrs["aria-required"] == "true"
    response = client.post(url, {})
    assert response.status_code == 200
    assert "请勾选确认：冻结无法撤销。" in response.content.decode()
    assert not PoolVersion.objects.exists()
