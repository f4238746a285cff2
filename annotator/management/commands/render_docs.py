"""`manage.py render_docs`: the help pages' Markdown (templates/docs/<lang>/<page>.md) to the
committed HTML fragments beside it (<page>.html-fragment), which the help views serve.

Run it after editing a page; a test fails while a fragment is out of date with its source. The
`markdown` package is a development dependency only (the `test` extra): serving needs none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotator.help import DOCS_DIR, LANGUAGES, PAGES

# Tables for the reference tables; toc gives every heading an id, so a page can link to a section
# (unicode slugs, so Chinese headings get one too).
EXTENSIONS = ["tables", "fenced_code", "toc"]


def render_markdown(text: str) -> str:
    import markdown  # development only: see the module docstring
    from markdown.extensions.toc import slugify_unicode

    html = markdown.markdown(
        text, extensions=EXTENSIONS, extension_configs={"toc": {"slugify": slugify_unicode}}
    )
    return html + "\n"


def sources() -> list[tuple[Path, Path]]:
    """(Markdown source, HTML fragment) for every page in every language."""
    return [
        (DOCS_DIR / language / f"{slug}.md", DOCS_DIR / language / f"{slug}.html-fragment")
        for language in LANGUAGES
        for slug, _title in PAGES
    ]


class Command(BaseCommand):
    help = "Render the help pages' Markdown (templates/docs/) to their committed HTML fragments."
    requires_system_checks: list[str] = []  # files to files: no database, no URLconf

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            import markdown  # noqa: F401
        except ImportError:
            raise CommandError('render_docs needs the markdown package: pip install -e ".[test]"') from None
        for source, fragment in sources():
            html = render_markdown(source.read_text(encoding="utf-8"))
            if not fragment.exists() or fragment.read_text(encoding="utf-8") != html:
                fragment.write_text(html, encoding="utf-8")
                self.stdout.write(f"Rendered {fragment.relative_to(DOCS_DIR.parent.parent)}")
