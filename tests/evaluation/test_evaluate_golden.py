"""`manage.py evaluate` without --metrics prints, byte for byte, what it printed before several
metrics and systems came: the reports in tests/evaluation/golden/ were written by that code
(the commit that added them), for one and two runs, in text, JSON and CSV."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
TREC = ROOT / ".." / "shared" / "oracles" / "trec_eval"
TREC_EVAL = ("--unjudged", "zero", "--ties", "docid-desc")
SMALL = (str(GOLDEN / "small.qrels"), str(GOLDEN / "small-a.run"))

# name -> arguments; every name is reported in each of the three formats.
CASES: dict[str, tuple[str, ...]] = {
    "trec-one": (str(TREC / "qrels.test"), str(TREC / "results.test"), *TREC_EVAL),
    "trec-two": (
        str(TREC / "qrels.test"),
        str(TREC / "results.test"),
        str(TREC / "results.trunc"),
        *TREC_EVAL,
        "--seed",
        "3",
    ),
    "trec-two-breakdown": (
        str(TREC / "qrels.test"),
        str(TREC / "results.test"),
        str(TREC / "results.trunc"),
        *TREC_EVAL,
        "--k",
        "5",
        "--gain",
        "exponential",
        "--breakdown",
    ),
    "trec-graded-one": (
        str(TREC / "qrels.rel_level"),
        str(TREC / "results.test"),
        *TREC_EVAL,
        "--grade-map=-1:0,4:3",
        "--k",
        "20",
    ),
    "small-two-expected": (
        *SMALL,
        str(GOLDEN / "small-b.run"),
        "--ties",
        "expected",
        "--zero-idcg",
        "exclude",
        "--k",
        "3",
    ),
    "small-two-docid": (*SMALL, str(GOLDEN / "small-b.run"), "--ties", "docid-asc", "--seed", "7"),
    "small-one-breakdown": (*SMALL, "--ties", "input-order", "--breakdown"),
}
FORMATS = ("text", "json", "csv")


def golden_path(name: str, format: str) -> Path:
    return GOLDEN / f"{name}.{format}"


def report(args: tuple[str, ...], format: str) -> str:
    out = io.StringIO()
    call_command("evaluate", *args, "--format", format, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("name", list(CASES))
def test_without_metrics_the_report_is_byte_for_byte_the_earlier_one(name: str, format: str) -> None:
    expected = golden_path(name, format).read_bytes().decode("utf-8")
    assert report(CASES[name], format) == expected
