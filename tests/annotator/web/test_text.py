"""Separators that belong to the language: enumerations, clauses and sentences in a row."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.utils import translation

from annotator.web.text import clauses, enumeration, sentences


@pytest.mark.parametrize(
    ("language", "values", "clause_list", "two_sentences"),
    [
        ("en", "1, 2", "a: x; b: y", "Kept. Withdrawn."),
        ("zh-hans", "1、2", "a: x；b: y", "已保留。已撤回。"),
    ],
)
def test_each_language_separates_values_clauses_and_sentences_its_own_way(
    language: str, values: str, clause_list: str, two_sentences: str
) -> None:
    first, second = ("Kept.", "Withdrawn.") if language == "en" else ("已保留。", "已撤回。")
    with translation.override(language):
        assert enumeration([1, 2]) == values
        assert clauses(["a: x", "b: y"]) == clause_list
        assert sentences([first, second]) == two_sentences
        assert sentences([first, ""]) == first  # an empty sentence adds no separator
        rendered = Template("{% load text %}{{ a }}{% sentence_space %}{{ b }}|{{ both|sentences }}").render(
            Context({"a": first, "b": second, "both": [first, second]})
        )
        assert rendered == f"{two_sentences}|{two_sentences}"
