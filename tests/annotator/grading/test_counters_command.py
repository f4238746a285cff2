"""`manage.py grading_counters`: the drift check and the repair, as an operator runs them."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotator.grading.services import grade_submit
from annotator.models import Candidate
from tests.conftest import Cast
from tests.factories import make_pairs


def test_the_command_reports_drift_and_recount_repairs_it(cast: Cast) -> None:
    (pair,) = make_pairs(cast.alpha, "A", required=2)
    grade_submit(candidate=pair, editor=cast.editor, value=2, reason="")
    out = StringIO()
    call_command("grading_counters", stdout=out)
    assert "Every grading counter agrees" in out.getvalue()

    Candidate.objects.filter(pk=pair.pk).update(grade_count=3)
    out = StringIO()
    with pytest.raises(CommandError, match="1 counters disagree with a recount"):
        call_command("grading_counters", stdout=out)
    assert out.getvalue().startswith(f"pair ({pair.pk}, 3, 1,")

    out = StringIO()
    call_command("grading_counters", "--recount", stdout=out)
    assert "Recounted" in out.getvalue() and "agrees" in out.getvalue()
    assert Candidate.objects.get(pk=pair.pk).grade_count == 1
