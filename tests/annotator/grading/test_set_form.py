"""The grading-set form checks its own bounds, with messages a person can act on."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotator.models import GradingSet
from tests.conftest import Cast


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "greater than or equal to 1"),
        ("-2", "greater than or equal to 1"),
        ("99", "less than or equal to 10"),
    ],
)
def test_grades_required_per_pair_out_of_bounds_is_refused_with_a_readable_message(
    cast: Cast, client: Client, value: str, message: str
) -> None:
    # The form refuses 0 itself: the database constraint's message is only its name.
    client.force_login(cast.owner)
    data = {"name": "Spring", "description": "", "required_grades": value}
    html = client.post(reverse("grading_set_create", kwargs={"slug": "alpha"}), data).content.decode()
    assert message in html and "grading_set_required_grades_positive" not in html
    assert not GradingSet.objects.filter(name="Spring").exists()
