"""Versioned criteria: a meaning-changing edit flags older grades in open sets for re-checking."""

from __future__ import annotations

from annotator.models import CriteriaChange, CriteriaVersion, Grade
from annotator.services.grading import criteria_publish, grade_submit
from tests.conftest import Cast
from tests.grading.factories import make_pairs

LEVELS = {3: "all conditions", 2: "one condition missing", 1: "background", 0: "nothing"}


def test_the_first_criteria_version_is_the_contracts_default_text(cast: Cast) -> None:
    current = CriteriaVersion.objects.current_for(cast.alpha)
    assert current.number == 1
    assert current.level_3.startswith("直接回答问题")  # Chinese first, then English (see below)
    assert "Answers the question directly: the key steps and the conditions" in current.level_3


def test_a_meaning_changing_edit_flags_older_grades_in_open_sets_only(cast: Cast) -> None:
    (open_pair,) = make_pairs(cast.alpha, "A", set_name="Open")
    (closed_pair,) = make_pairs(cast.alpha, "B", set_name="Closed")
    grade_submit(candidate=open_pair, editor=cast.editor, value=2)
    grade_submit(candidate=closed_pair, editor=cast.editor, value=2)
    closed_pair.grading_set.is_open = False
    closed_pair.grading_set.save()
    version, flagged = criteria_publish(
        project=cast.alpha, levels=LEVELS, change=CriteriaChange.MEANING, note="stricter 3", by=cast.owner
    )
    assert (version.number, flagged) == (2, 1)
    assert Grade.objects.get(candidate=open_pair).stale_reason == "criteria"
    assert Grade.objects.get(candidate=closed_pair).stale is False
    # Re-grading under the new version clears it.
    grade = grade_submit(candidate=open_pair, editor=cast.editor, value=2)
    assert grade.stale is False and grade.criteria_version == version


def test_a_wording_only_edit_leaves_grades_alone(cast: Cast) -> None:
    (pair,) = make_pairs(cast.alpha, "A")
    grade_submit(candidate=pair, editor=cast.editor, value=2)
    _version, flagged = criteria_publish(
        project=cast.alpha, levels=LEVELS, change=CriteriaChange.WORDING, note="", by=cast.owner
    )
    assert flagged == 0
    assert Grade.objects.get().stale is False


def test_criteria_of_another_project_are_untouched(cast: Cast) -> None:
    (beta_pair,) = make_pairs(cast.beta, "Z")
    grade_submit(candidate=beta_pair, editor=cast.outsider, value=1)
    criteria_publish(project=cast.alpha, levels=LEVELS, change=CriteriaChange.MEANING, note="", by=cast.owner)
    assert Grade.objects.get().stale is False
    assert CriteriaVersion.objects.current_for(cast.beta).number == 1


def test_the_default_criteria_are_written_in_both_languages_whoever_opens_the_project_first(cast: Cast) -> None:
    """Version 1 was stored in the language of the first request: English criteria for the Chinese
    editors, or the other way round (QA report)."""
    from django.utils import translation

    from annotator.models import CriteriaVersion

    with translation.override("en"):
        first = CriteriaVersion.objects.current_for(cast.alpha)
    with translation.override("zh-hans"):
        other = CriteriaVersion.objects.current_for(cast.beta)
    for version in (first, other):
        assert version.level_2 == "有实质帮助，但缺少一个重要条件。 Substantive help, but an important condition is missing."
        assert version.level_0.startswith("对这个问题没有帮助。")


def test_an_edit_started_on_an_older_version_is_refused_not_published_over_the_newer_one(cast: Cast) -> None:
    """QA: a second tab still showing version 1 published 'wording only' over a meaning-changing
    version 2, undoing it while the history said the grades stand."""
    import pytest

    from annotator.services.grading import CriteriaOutdated

    criteria_publish(project=cast.alpha, levels=LEVELS, change=CriteriaChange.MEANING, note="", by=cast.owner, based_on=1)
    typo_fix = {**LEVELS, 0: "nothing at all"}
    with pytest.raises(CriteriaOutdated, match="Criteria version 2 was published after this page showed version 1"):
        criteria_publish(project=cast.alpha, levels=typo_fix, change=CriteriaChange.WORDING, note="", by=cast.owner, based_on=1)
    assert CriteriaVersion.objects.filter(project=cast.alpha).count() == 2
    version, _flagged = criteria_publish(
        project=cast.alpha, levels=typo_fix, change=CriteriaChange.WORDING, note="", by=cast.owner, based_on=2
    )
    assert version.number == 3


def test_the_criteria_page_keeps_a_stale_tabs_text_and_lets_it_publish_once_read(cast: Cast) -> None:
    import re

    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(cast.owner)
    page = reverse("criteria", kwargs={"slug": "alpha"})
    publish = reverse("criteria_publish", kwargs={"slug": "alpha"})
    tab = client.get(page).content.decode()
    assert re.search(r'name="based_on" value="1"', tab)
    first = {f"level_{n}": text for n, text in LEVELS.items()} | {"change": "meaning", "note": "", "based_on": "1"}
    assert client.post(publish, first).status_code == 302
    current = CriteriaVersion.objects.current_for(cast.alpha)
    stale = {f"level_{n}": text for n, text in current.levels()} | {"change": "wording", "based_on": "1"}
    stale["level_0"] = "Typed in the stale tab."
    stale["level_3"] = CriteriaVersion.objects.get(project=cast.alpha, number=1).level_3
    response = client.post(publish, stale)
    html = response.content.decode()
    assert response.status_code == 200 and "Criteria version 2 was published after this page showed version 1" in html
    assert "Typed in the stale tab." in html and re.search(r'name="based_on" value="2"', html)
    assert CriteriaVersion.objects.filter(project=cast.alpha).count() == 2
    # Read, then published on purpose: accepted on version 2.
    assert client.post(publish, {**stale, "based_on": "2"}).status_code == 302
    assert CriteriaVersion.objects.current_for(cast.alpha).number == 3
