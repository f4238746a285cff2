"""The agreement index: each set's exact agreement and ordinal alpha, lowest first, so a reviewer
sees which set needs a calibration talk; sets without enough data last, saying so."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotator.models import GradingSet
from tests import factories
from tests.conftest import Cast

pytestmark = pytest.mark.django_db
AGREE = {("q1", "d1"): (3, 3), ("q1", "d2"): (0, 0), ("q2", "d3"): (2, 2), ("q2", "d4"): (1, 1)}
APART = {("q1", "d1"): (3, 0), ("q1", "d2"): (0, 3), ("q2", "d3"): (2, 2), ("q2", "d4"): (1, 2)}


def index(client: Client) -> str:
    return client.get(reverse("agreement_index", kwargs={"slug": "alpha"})).content.decode()


def test_the_index_puts_the_set_that_agrees_least_first_and_the_one_without_data_last(
    cast: Cast, client: Client
) -> None:
    editors = (cast.editor, cast.editor2)
    factories.graded_set(cast.alpha, editors, AGREE, name="Aligned")
    factories.graded_set(cast.alpha, editors, APART, name="Calibrate me")
    GradingSet.objects.create(project=cast.alpha, name="Empty", required_grades=2)
    client.force_login(cast.reviewer)
    html = index(client)
    names = re.findall(r'<a href="/p/alpha/disputes/agreement/\d+/">([^<]+)</a>', html)
    assert names == ["Calibrate me", "Aligned", "Empty"]
    rows = html.split("<tr>")
    aligned = next(r for r in rows if ">Aligned<" in r)
    apart = next(r for r in rows if ">Calibrate me<" in r)
    empty = next(r for r in rows if ">Empty<" in r)
    assert "100.0%" in aligned and "1.000" in aligned
    assert "25.0%" in apart  # 1 of 4 pairs graded the same
    assert "Not enough data: no pair has grades from two editors yet." in empty


def test_the_index_stays_a_few_queries_per_set(cast: Cast, client: Client) -> None:
    editors = (cast.editor, cast.editor2)
    factories.graded_set(cast.alpha, editors, AGREE, name="One")
    client.force_login(cast.reviewer)
    with CaptureQueriesContext(connection) as one:
        index(client)
    for n in range(3):
        factories.graded_set(cast.alpha, editors, APART, name=f"More {n}")
    with CaptureQueriesContext(connection) as four:
        index(client)
    assert len(four) - len(one) <= 3 * 2  # one grades read per set (plus its blind-pairs check)


def test_an_editor_cannot_read_the_index_and_another_project_is_not_found(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    assert client.get(reverse("agreement_index", kwargs={"slug": "alpha"})).status_code == 403
    client.force_login(cast.outsider)
    assert client.get(reverse("agreement_index", kwargs={"slug": "alpha"})).status_code == 404
