"""Both UI languages stay whole: every translatable string has a Simplified Chinese translation."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from django.test import Client
from django.urls import reverse

from tests.conftest import Cast

ROOT = Path(__file__).resolve().parents[2]
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
        cwd=copy, env=env, check=True, capture_output=True, text=True, timeout=300,
    )
    po = copy / CATALOG
    untranslated = subprocess.run(
        ["msgattrib", "--untranslated", "--no-obsolete", str(po)], capture_output=True, text=True, check=True
    ).stdout
    fuzzy = subprocess.run(
        ["msgattrib", "--only-fuzzy", "--no-obsolete", str(po)], capture_output=True, text=True, check=True
    ).stdout
    missing = re.findall(r'^msgid "(.+)"$', untranslated, flags=re.M)
    assert not missing, f"{len(missing)} strings lack a zh-Hans translation (run `make messages`): {missing}"
    assert 'msgid "' not in fuzzy.split("\n\n", 1)[-1], f"fuzzy translations need review:\n{fuzzy}"


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
