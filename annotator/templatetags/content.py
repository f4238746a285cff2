"""Marks text the project's users wrote (queries, document titles and bodies) with its language."""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from annotator.models import Project

register = template.Library()


@register.simple_tag
def content_lang(project: Project | None) -> SafeString:
    """` lang="zh-Hans"` for the project's stated content language, nothing when none is stated
    (the text then inherits the page's language, which is all HTML can say about unknown text).

    The UI language and the content language differ often here (Chinese help articles graded in
    the English UI), and a screen reader picks its voice from `lang` (WCAG 3.1.2)."""
    language = getattr(project, "content_language", "")
    return format_html(' lang="{}"', language) if language else SafeString("")
