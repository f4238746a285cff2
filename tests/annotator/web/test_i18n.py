"""Both UI languages stay whole: every translatable string has a Simplified Chinese translation."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from django.test import Client
from django.urls import reverse

from tests.conftest import Cast

ROOT = Path(__file__).resolve().parents[3]
CATALOG = Path("annotator/locale/zh_Hans/LC_MESSAGES/django.po")


def test_every_message_in_the_code_has_a_zh_hans_translation(tmp_path: Path) -> None:
    """Re-extract the catalog from a copy of the sources, so strings never added to it count too."""
    copy = tmp_path / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.mo", "var")
    for name in ("annotator", "evaluation", "templates"):
        shutil.copytree(ROOT / name, copy / name, ignore=ignore)
    shutil.copy(ROOT / "manage.py", copy / "manage.py")
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "--no-obsolete", "-v0"],
        cwd=copy,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    po = copy / CATALOG
    untranslated = subprocess.run(
        ["msgattrib", "--untranslated", "--no-obsolete", str(po)], capture_output=True, text=True, check=True
    ).stdout
    fuzzy = subprocess.run(
        ["msgattrib", "--only-fuzzy", "--no-obsolete", str(po)], capture_output=True, text=True, check=True
    ).stdout
    missing = msgids(untranslated)
    assert not missing, f"{len(missing)} strings lack a zh-Hans translation (run `make messages`): {missing}"
    unreviewed = msgids(fuzzy)
    assert not unreviewed, f"{len(unreviewed)} fuzzy translations need review: {unreviewed}"


def msgids(po_text: str) -> list[str]:
    """The msgids of a .po text, long ones too (written as msgid "" plus continuation lines),
    without the header entry (whose msgid is empty)."""
    found = []
    for block in po_text.split("\n\n"):
        parts: list[str] | None = None
        for line in block.splitlines():
            if line.startswith("msgid "):
                parts = [line.removeprefix("msgid ")]
            elif parts is not None and line.startswith('"'):
                parts.append(line)
            elif parts is not None:
                break
        text = "".join(part.strip()[1:-1] for part in parts or [])
        if text:
            found.append(text)
    return found


def test_msgids_finds_short_and_wrapped_entries() -> None:
    po = (
        'msgid ""\nmsgstr ""\n"Language: zh_Hans\\n"\n\n'
        '#: a.py:1\nmsgid "Short"\nmsgstr ""\n\n'
        '#: b.py:2\nmsgid ""\n"A long message that "\n"wraps."\nmsgstr ""\n'
    )
    assert msgids(po) == ["Short", "A long message that wraps."]


def test_the_tracked_catalog_compiles_without_errors() -> None:
    result = subprocess.run(
        ["msgfmt", "--check", "-o", "/dev/null", str(ROOT / CATALOG)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_pages_switch_to_chinese_with_the_language_cookie(cast: Cast, client: Client) -> None:
    client.force_login(cast.editor)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    html = client.get(reverse("home")).content.decode()
    assert 'lang="zh-hans"' in html
    assert "你的项目" in html
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert "Your projects" in client.get(reverse("home")).content.decode()


def test_django_messages_read_as_chinese_in_chinese() -> None:
    # annotator/django_messages.py re-translates Django's own: an ASCII colon after every label,
    # "变量" (a program variable) in the length errors, and 6.1's untranslated empty choice.
    from django import forms
    from django.db.models.fields import BLANK_CHOICE_LABEL
    from django.utils import translation

    class Reason(forms.Form):
        reason = forms.CharField(label="理由", max_length=3)

    with translation.override("zh-hans"):
        form = Reason({"reason": "abcd"})
        assert form["reason"].label_tag().endswith("理由：</label>")
        assert form.errors["reason"] == ["最多 3 个字符（当前 4 个）。"]
        assert str(BLANK_CHOICE_LABEL) == "- 请选择 -"


def test_a_settled_dispute_reads_with_chinese_punctuation(cast: Cast, client: Client) -> None:
    # The sentence around the final grade is translated whole, brackets and commas included.
    from annotator.disputes.services import dispute_settle
    from tests.factories import in_review

    dispute = in_review(cast.alpha, cast.editor, cast.editor2, (0, 3))
    dispute_settle(dispute=dispute, by=cast.reviewer, grade=3, note="")
    client.force_login(cast.reviewer)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    for name, ending in (("dispute_detail", "（审核人裁定：rita）。"), ("dispute_review", "</time>）。")):
        html = client.get(reverse(name, kwargs={"slug": "alpha", "dispute_id": dispute.pk})).content.decode()
        assert "<strong>最终等级：3</strong>（审核人裁定：rita" in html and ending in html, name
        assert "decided by" not in html and "(审核" not in html, name


def test_gain_names_in_sentences_follow_the_language() -> None:
    # "已保存的设置：K = 5，linear 增益。" mixed the stored code into a Chinese sentence.
    from django.utils import translation

    from evaluation.templatetags.evaluation_numbers import gain_name

    with translation.override("zh-hans"):
        assert (gain_name("linear"), gain_name("exponential")) == ("线性", "指数")
    with translation.override("en"):
        assert gain_name("linear") == "linear"


def test_lists_inside_chinese_sentences_use_chinese_separators() -> None:
    """Not "（1, 2）" nor "(q3, K): 分歧未决" in Chinese messages: no ASCII separators and brackets."""
    from django.utils import translation

    from annotator.disputes.services import override_needs_note_message
    from annotator.pools.freeze import Blocker, FreezeBlocked

    blockers = [
        Blocker("q3", "K", "open_dispute", {"status": "in_review"}),
        Blocker("q3", "L", "no_final_grade", {"grades": 1, "required": 2}),
    ]
    with translation.override("zh-hans"):
        assert "（1、2）" in override_needs_note_message(0, {2, 1})
        message = str(FreezeBlocked(blockers))
        assert "（q3，K）：" in message and "；（q3，L）：" in message and "(q3" not in message
    with translation.override("en"):
        assert "(1, 2)" in override_needs_note_message(0, {1, 2})
        assert "(q3, K): open dispute" in str(FreezeBlocked(blockers))
