"""The web forms offer exactly the policies the engine knows: the two lists can never drift apart."""

from __future__ import annotations

import pytest
from django.db import models

from evaluation.metrics import policies
from evaluation.models import (
    ExtraQueriesPolicy,
    Gain,
    MissingQueriesPolicy,
    TiesPolicy,
    UnjudgedPolicy,
    ZeroIdcgPolicy,
)


@pytest.mark.parametrize(
    ("choices", "engine_values"),
    [
        (Gain, policies.GAINS),
        (UnjudgedPolicy, policies.UNJUDGED),
        (ZeroIdcgPolicy, policies.ZERO_IDCG),
        (TiesPolicy, policies.TIES),
        (MissingQueriesPolicy, policies.MISSING_QUERIES),
        (ExtraQueriesPolicy, policies.EXTRA_QUERIES),
    ],
)
def test_every_policy_choice_of_the_forms_is_one_the_engine_accepts(
    choices: type[models.TextChoices], engine_values: tuple[str, ...]
) -> None:
    assert set(choices.values) == set(engine_values)
