"""Versioned criteria: a meaning-changing edit flags older grades in open sets for re-checking."""

from __future__ import annotations

from annotator.documents.services import criteria_publish
from annotator.grading.services import grade_submit
from annotator.models import CriteriaChange, CriteriaVersion, Grade
from tests.conftest import Cast
from tests.factories import make_pairs

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


def test_the_default_criteria_are_written_in_both_languages_whoever_opens_the_project_first(
    cast: Cast,
) -> None:
    """Version 1 is not stored in the language of the first request, which would give English
    criteria to the Chinese editors, or the other way round."""
    from django.utils import translation

    from annotator.models import CriteriaVersion

    with translation.override("en"):
        first = CriteriaVersion.objects.current_for(cast.alpha)
    with translation.override("zh-hans"):
        other = CriteriaVersion.objects.current_for(cast.beta)
    for version in (first, other):
        assert (
            version.level_2
            == "有实质帮助，但缺少一个重要条件。 Substantive help, but an important condition is missing."
        )
        assert version.level_0.startswith("对这个问题没有帮助。")


def test_an_edit_started_on_an_older_version_is_refused_not_published_over_the_newer_one(cast: Cast) -> None:
    """A second tab still showing version 1 must not publish 'wording only' over a meaning-changing
    version 2, undoing it while the history says the grades stand."""
    import pytest

    from annotator.grading.services import CriteriaOutdated

    criteria_publish(
        project=cast.alpha, levels=LEVELS, change=CriteriaChange.MEANING, note="", by=cast.owner, based_on=1
    )
    typo_fix = {**LEVELS, 0: "nothing at all"}
    with pytest.raises(
        CriteriaOutdated, match="Criteria version 2 was published after this page showed version 1"
    ):
        criteria_publish(
            project=cast.alpha,
            levels=typo_fix,
            change=CriteriaChange.WORDING,
            note="",
            by=cast.owner,
            based_on=1,
        )
    assert CriteriaVersion.objects.filter(project=cast.alpha).count() == 2
    version, _flagged = criteria_publish(
        project=cast.alpha, levels=typo_fix, change=CriteriaChange.WORDING, note="", by=cast.owner, based_on=2
    )
    assert version.number == 3


def test_a_stale_tabs_edit_is_merged_with_the_newer_version_so_publishing_again_undoes_nothing(
    cast: Cast,
) -> None:
    """After the refusal the form merges onto version 2 and shows what both changed, so a second
    click does not publish version 1's text over version 2."""
    import html as html_module
    import re

    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(cast.owner)
    publish = reverse("criteria_publish", kwargs={"slug": "alpha"})
    v1 = CriteriaVersion.objects.current_for(cast.alpha)
    typed_on_v1 = {f"level_{n}": text for n, text in v1.levels()}
    # Tab 1 changes levels 3 and 0; tab 2, still on version 1, changes levels 2 and 0.
    tab1 = {
        **typed_on_v1,
        "level_3": "Tab 1's level 3.",
        "level_0": "Tab 1's level 0.",
        "change": "meaning",
        "based_on": "1",
    }
    assert client.post(publish, tab1).status_code == 302
    tab2 = {
        **typed_on_v1,
        "level_2": "Tab 2's level 2.",
        "level_0": "Tab 2's level 0.",
        "change": "wording",
        "based_on": "1",
    }
    response = client.post(publish, tab2)
    html = response.content.decode()
    assert response.status_code == 200 and CriteriaVersion.objects.filter(project=cast.alpha).count() == 2
    assert (
        "Criteria version 2 was published after this page showed version 1. Its changes are now in the form"
        in html
    )
    assert re.search(r'name="based_on" value="2"', html)
    # Level 3: only tab 1 changed it, so the form carries its text; level 2: only tab 2's.
    assert "Tab 1&#x27;s level 3." in html and "Tab 2&#x27;s level 2." in html
    # Level 0: both changed it: tab 2's text stays, tab 1's is shown beside it.
    assert "Version 2 changed this level too; it says: “Tab 1&#x27;s level 0.”" in html
    # Through htmx the page's "Current" card and history come along too.
    fragment = client.post(publish, tab2, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in fragment and 'id="criteria-form"' in fragment
    assert (
        re.search(r'id="criteria-current"[^>]*hx-swap-oob="true"', fragment)
        and "Current: version 2" in fragment
    )
    assert (
        re.search(r'id="criteria-history"[^>]*hx-swap-oob="true"', fragment)
        and "Tab 1&#x27;s level 0." in fragment
    )
    # Publishing the form as it now stands keeps both edits.
    merged = {**tab2, "level_3": "Tab 1's level 3.", "based_on": "2"}
    assert client.post(publish, merged).status_code == 302
    v3 = CriteriaVersion.objects.current_for(cast.alpha)
    assert (v3.number, v3.level_3, v3.level_2, v3.level_0) == (
        3,
        "Tab 1's level 3.",
        "Tab 2's level 2.",
        "Tab 2's level 0.",
    )
    # A made-up version number merges onto the newest as it is, without a 500, and says so, not
    # "version 3 was published after this page showed version 99".
    response = client.post(publish, {**merged, "level_1": "Another.", "based_on": "99"})
    html = html_module.unescape(response.content.decode())
    assert response.status_code == 200 and "The form named criteria version 99, which does not exist." in html
    assert "It now holds version 3's text with your changes" in html and "was published after" not in html
