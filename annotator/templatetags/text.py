"""Sentences in a row in templates, separated as the active language separates them (annotator.web.text)."""

from __future__ import annotations

from collections.abc import Iterable

from django import template

from annotator.web import text

register = template.Library()


@register.simple_tag
def sentence_space() -> str:
    """Between two translated sentences written one after the other: a space, none in Chinese."""
    return text.sentence_space()


@register.filter
def sentences(items: Iterable[object]) -> str:
    """A list of translated sentences as one text (`{{ reasons|sentences }}`)."""
    return text.sentences(items)
