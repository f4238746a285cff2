"""The engine's errors reach Chinese-speaking users in Chinese, with every value still in them.

The engine is a Django-free library that reports in English. Each error carries its English
template (marked with `gettext_noop`, so `makemessages` puts it in the one catalog) and the values
that fill it; the web app translates the template. The i18n test already fails on any template
without a translation; these tests hold the rest: no error is built from a ready-made English
sentence, the English text is unchanged, and the pages show the translation.
"""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotator.pools.services import PoolImportError
from annotator.web.errors import describe_error
from evaluation import formats, metrics
from evaluation.metrics.policies import EvaluationError, gettext_noop
from tests.annotator.pools.test_exports_imports import import_text
from tests.conftest import Cast

ROOT = Path(__file__).resolve().parents[3]
ENGINE_SOURCES = [
    *sorted((ROOT / "evaluation" / "metrics").glob("*.py")),
    *sorted((ROOT / "evaluation" / "formats").glob("*.py")),
    *(ROOT / "evaluation" / name for name in ("runs.py", "comparisons.py", "exports.py")),
]


def _templates_in(path: Path) -> list[tuple[int, ast.expr]]:
    """(line, first argument) of every EvaluationError(...) call in the file."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name == "EvaluationError" and node.args:
                calls.append((node.lineno, node.args[0]))
    return calls


def test_every_engine_error_is_built_from_a_marked_template() -> None:
    """A literal or an f-string would reach the page untranslated; a marked template never does.
    A plain name is a template chosen above the call (each branch marked where it is written)."""
    unmarked = []
    seen = 0
    for path in ENGINE_SOURCES:
        for line, argument in _templates_in(path):
            seen += 1
            marked = (
                isinstance(argument, ast.Call)
                and getattr(argument.func, "id", "") == "gettext_noop"
                and isinstance(argument.args[0], ast.Constant)
            )
            if not (marked or isinstance(argument, ast.Name)):
                unmarked.append(f"{path.relative_to(ROOT)}:{line}")
    assert seen > 40  # the walk found the raise sites: this check can fail
    assert not unmarked, unmarked


def test_the_english_detail_is_the_filled_template_and_survives_pickling() -> None:
    with pytest.raises(EvaluationError) as caught:
        metrics.score_query(["A", "A"], {"A": 1}, query_id="q1")
    error = caught.value
    assert error.detail == "query 'q1': document 'A' appears twice in the ranking (positions 1 and 2)"
    assert error.translated(lambda text: text) == error.detail
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.template, copy.params, copy.detail, str(copy)) == (
        error.template,
        error.params,
        error.detail,
        str(error),
    )


def _in(language: str, error: EvaluationError) -> str:
    with translation.override(language):
        return describe_error(error)


@pytest.mark.parametrize(
    ("make_error", "values"),
    [
        (lambda: metrics.score_query(["A", "B"], {"A": 1}, query_id="问题一"), ["“问题一”", "“B”", "未评分"]),
        (lambda: metrics.Settings(k=0), ["K", "0", "正整数"]),
        (
            lambda: formats.read_run(_stream("q1 Q0 A 1 2.0 s\nq1 Q0 A 2 1.0 s\n", "dup.trec")),
            ["dup.trec", "第 2 行", "“A”", "出现了两次"],
        ),
        (
            lambda: formats.read_qrels(_stream("q1 0 A 3\nq1 0 C 7\n", "levels.qrels")),
            ["levels.qrels", "第 2 行", "“C”", "7", "等级映射"],
        ),
        (
            lambda: metrics.score_query(["A", "B"], {"A": 1, "B": 2}, scores=[1.0, 1.0], query_id="q1"),
            ["“q1”", "“A”，“B”", "1.0", "docid-desc"],
        ),
    ],
)
def test_engine_errors_read_in_chinese_with_their_values(make_error: object, values: list[str]) -> None:
    with pytest.raises(EvaluationError) as caught:
        make_error()  # type: ignore[operator]
    english, chinese = _in("en", caught.value), _in("zh-hans", caught.value)
    # Pages quote values “so” where the engine's own (command-line) text has 'so'.
    assert english.replace("“", "'").replace("”", "'").endswith(caught.value.detail) and chinese != english
    for value in values:
        assert value in chinese, (value, chinese)


def _stream(text: str, name: str) -> object:
    import io

    stream = io.StringIO(text)
    stream.name = name
    return stream


def test_a_pool_import_error_is_all_chinese_on_a_chinese_page(cast: Cast) -> None:
    with translation.override("zh-hans"), pytest.raises(PoolImportError) as refused:
        import_text(cast, "q1 0 A 3\nq1 0 C 7\n", "qrels", name="levels.qrels")
    message = str(refused.value)
    assert "第 2 行" in message and "不在 0 到 3 的范围内" in message and "“3:3”" not in message
    assert "is outside" not in message


def test_a_run_upload_error_is_shown_in_chinese(cast: Cast, client: Client) -> None:
    client.force_login(cast.reviewer)
    client.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    response = client.post(
        reverse("run_upload", kwargs={"slug": "alpha"}),
        {
            "name": "dup",
            "format": "auto",
            "file": SimpleUploadedFile("dup.trec", b"q1 Q0 A 1 2 s\nq1 Q0 A 2 1 s\n"),
            "k": 10,
            "unjudged": "error",
            "ties": "error",
            "missing_queries": "zero",
            "extra_queries": "error",
        },
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "出现了两次" in html and "appears twice" not in html


def test_an_id_the_canonical_serialisation_cannot_hold_is_refused_in_chinese(cast: Cast) -> None:
    # The readers accept a tab inside a JSON string; the hashed serialisation cannot hold it.
    text = '{"query_id": "q1", "doc_id": "A\\tB", "grade": 1}\n'
    with translation.override("zh-hans"), pytest.raises(PoolImportError) as refused:
        import_text(cast, text, "jsonl")
    message = str(refused.value)
    assert "“A\\tB”" in message and "U+0009" in message and "制表符" in message and "tab" not in message


def test_a_message_quotes_at_most_a_few_hundred_characters_of_a_value() -> None:
    """A 1 MB bad line, or a CSV row of 500,000 fields, is not echoed whole: no error pages of
    megabytes. The attributes keep the whole value for code that points at it."""
    import io

    from evaluation.formats import read_qrels, read_run
    from evaluation.metrics.policies import MAX_QUOTED_CHARS, MAX_QUOTED_ITEMS

    long_grade = "x" * 1_000_000
    with pytest.raises(EvaluationError) as caught:
        read_qrels(io.StringIO(f"q1 0 A {long_grade}\n"), format="trec")
    assert len(str(caught.value)) < MAX_QUOTED_CHARS + 300
    assert "x" * MAX_QUOTED_CHARS + "…" in str(caught.value)
    wide = "query_id,doc_id,rank\n" + "q1,A,1" + ",9" * 500_000 + "\n"
    with pytest.raises(EvaluationError) as caught:
        read_run(io.StringIO(wide), format="csv")
    message = str(caught.value)
    assert len(message) < 1000 and "found 500003" in message
    assert f"'… {500_003 - MAX_QUOTED_ITEMS} more'" in message
    long_doc = "d" * 5000
    with pytest.raises(EvaluationError) as caught:
        metrics.score_query([long_doc, long_doc], {"A": 1}, query_id="q1")
    assert caught.value.doc_id == long_doc and len(str(caught.value)) < 1000


def test_a_query_id_with_a_tab_is_refused_on_its_line() -> None:
    from evaluation.runs import RunUploadError, run_parse

    data = (
        b'{"query_id": "q1", "doc_id": "A", "score": 1}\n{"query_id": "q\\t2", "doc_id": "B", "score": 1}\n'
    )
    with pytest.raises(
        RunUploadError, match=r"run\.jsonl, line 2: query ID “q\\t2” contains the character U\+0009"
    ):
        run_parse(data=data, fmt="jsonl", file_name="run.jsonl")


def test_pages_quote_values_with_the_apps_quotes_and_keep_escapes_visible() -> None:
    """The engine's %r quotes ('q1') read as stray ASCII in Chinese messages, which use “”."""
    error = EvaluationError(
        gettext_noop("query %(query)r: document %(doc)r appears twice"), {"query": "问题一", "doc": "a\tb "}
    )
    assert _in("en", error) == "query “问题一”: document “a\\tb ” appears twice"
    assert str(error) == "query '问题一': document 'a\\tb ' appears twice"  # the command line keeps repr
