"""`manage.py evaluate QRELS RUN_A [RUN_B ...]`: NDCG@K of one run, or two runs compared; with
--metrics, --baseline or more than two runs, every metric asked for of every run, and every pair
(or every run against the baseline) compared with Holm-adjusted p-values.

A thin shell around `evaluation.formats`, `metrics` and `reports` that `manage.py` runs without
Django's setup (it needs no database), which would cost ~0.8 s of every call. Bad input exits
with status 2 and one line naming the file, the line and the value.
"""

from __future__ import annotations

import os
import sys
from argparse import SUPPRESS, ArgumentParser, ArgumentTypeError
from collections.abc import Mapping, Sequence
from importlib import metadata
from itertools import combinations
from typing import Any, NoReturn, TextIO

from evaluation import systems_reports
from evaluation.formats import format_grade_map, parse_grade_map, read_qrels, read_run
from evaluation.formats.registry import names
from evaluation.formats.values import is_plain_integer
from evaluation.metrics import (
    DEFAULT_RELEVANT,
    EXTRA_QUERIES,
    FAMILIES,
    GAINS,
    MISSING_QUERIES,
    TIES,
    UNJUDGED,
    ZERO_IDCG,
    EvaluationError,
    Metric,
    Settings,
    compare_results,
    compare_systems,
    evaluate_run,
    ndcg,
    parse_metrics,
)
from evaluation.metrics.policies import gettext_noop
from evaluation.metrics.systems import default_labels
from evaluation.reports import render_csv, render_json, render_text

HELP = (
    "NDCG@K of RUN_A (and RUN_B, compared with A) against the judgments in QRELS; with --metrics, "
    "--baseline or more runs, each metric of each run (labelled a, b, c, ...) and each pair compared, "
    "with Holm-adjusted p-values. "
    "Files are TREC, CSV or JSONL (by extension, else TREC). Every policy is explicit; "
    "see evaluation/README.md."
)
QRELS_FORMATS = ("auto", *names("qrels"))
RUN_FORMATS = ("auto", *names("run"))


def whole_number(text: str) -> int:
    """An integer written with the digits 0-9, as file scores must be: int() alone also takes
    " 3", "+3" and full-width or Arabic-Indic digits."""
    if not is_plain_integer(text):
        raise ArgumentTypeError(f"{text!r} is not a whole number written with the digits 0-9")
    return int(text)


def add_arguments(parser: ArgumentParser) -> None:
    parser.add_argument("qrels", metavar="QRELS", help="judgments: TREC qrels, CSV or JSONL")
    parser.add_argument("run_a", metavar="RUN_A", help="system A: TREC run, CSV or JSONL")
    parser.add_argument(
        "more_runs",
        metavar="RUN_B",
        nargs="*",
        help="systems B, C, ... (labelled in argument order), compared pairwise (deltas are B - A) "
        "or against --baseline",
    )
    parser.add_argument(
        "--k",
        type=whole_number,
        default=None,
        help="cutoff K of NDCG, a positive integer (default 10; with --metrics, their largest K)",
    )
    parser.add_argument(
        "--metrics",
        default=None,
        metavar="NAME@K,...",
        help="metrics to report, e.g. ndcg@10,recall@100,p@10,rr@10,ap@100,judged@10",
    )
    parser.add_argument(
        "--relevant",
        type=whole_number,
        default=DEFAULT_RELEVANT,
        help="lowest grade that counts as relevant for recall, p, rr and ap: 1 (default), 2 or 3",
    )
    parser.add_argument(
        "--baseline",
        default=None,
        metavar="LABEL",
        help="compare every other run with this one (a, b, ...) instead of every pair",
    )
    parser.add_argument(
        "--family",
        choices=FAMILIES,
        default="pairs-x-metrics",
        help="family of the Holm-Bonferroni correction: pairs-x-metrics (default) or pairs-per-metric",
    )
    parser.add_argument(
        "--gain", choices=GAINS, default="linear", help="linear: r (default); exponential: 2^r-1"
    )
    parser.add_argument(
        "--unjudged",
        choices=UNJUDGED,
        default="error",
        help="an ID in the top K without a grade: error (default) or zero (gain 0, counted)",
    )
    parser.add_argument(
        "--zero-idcg",
        choices=ZERO_IDCG,
        default="zero",
        help="a query with no grade above 0: zero (NDCG 0, in the mean; default) or exclude (counted)",
    )
    parser.add_argument(
        "--ties",
        choices=TIES,
        default="error",
        help=(
            "equal scores: error (default), docid-desc (trec_eval), docid-asc, input-order, "
            "expected (scikit-learn)"
        ),
    )
    parser.add_argument(
        "--missing-queries",
        choices=MISSING_QUERIES,
        default="zero",
        help="a pool query absent from a run: zero (empty ranking, counted; default) or error",
    )
    parser.add_argument(
        "--extra-queries",
        choices=EXTRA_QUERIES,
        default="error",
        help="a run query absent from the pool: error (default) or ignore (skipped, counted)",
    )
    parser.add_argument(
        "--format", choices=("text", "json", "csv"), default="text", help="output (default text)"
    )
    parser.add_argument(
        "--breakdown",
        action="store_true",
        help="add every per-position term (ranking and ideal) of every query and system; K at most 10000",
    )
    parser.add_argument(
        "--seed",
        type=whole_number,
        default=0,
        help="seed of the randomization test and bootstrap, 0 to 2^63-1 (default 0)",
    )
    parser.add_argument(
        "--grade-map",
        default=None,
        metavar="FROM:TO,...",
        help="map grades when reading QRELS (needed for grades outside 0..3), e.g. --grade-map=-1:0,4:3 "
        "(use '=' before a leading minus)",
    )
    parser.add_argument(
        "--qrels-format", choices=QRELS_FORMATS, default="auto", help="QRELS format (default: by extension)"
    )
    parser.add_argument(
        "--run-format",
        choices=RUN_FORMATS,
        default="auto",
        help="format of both runs (default: each by its extension)",
    )


def _systems_report(options: Mapping[str, Any]) -> bool:
    """Whether to write the report of several metrics or systems: one or two runs without
    --metrics and --baseline keep the NDCG report they always had."""
    runs = 1 + len(options["more_runs"] or ())
    return options["metrics"] is not None or options["baseline"] is not None or runs > 2


def _check_options(options: Mapping[str, Any], paths: Sequence[str]) -> tuple[Metric, ...]:
    """The metrics asked for; refuses options that do not go together, before any file is read."""
    chosen = parse_metrics(options["metrics"].split(",")) if options["metrics"] is not None else ()
    if chosen and options["k"] is not None:
        raise EvaluationError(
            gettext_noop(
                "--k %(k)s sets NDCG's cutoff when --metrics is not given; with --metrics write each "
                "metric's cutoff in its name, e.g. ndcg@%(k)s"
            ),
            {"k": options["k"]},
        )
    baseline = options["baseline"]
    if baseline is not None:
        if len(paths) < 2:
            raise EvaluationError(
                gettext_noop("--baseline %(baseline)r needs two or more runs to compare; one run was given"),
                {"baseline": baseline},
            )
        labels = default_labels(len(paths))
        if baseline not in labels:
            raise EvaluationError(
                gettext_noop(
                    "--baseline %(baseline)r is not a run's label; the runs are labelled %(labels)s, "
                    "in argument order"
                ),
                {"baseline": baseline, "labels": ", ".join(labels)},
            )
    if options["breakdown"] and _systems_report(options):
        raise EvaluationError(
            gettext_noop(
                "--breakdown shows the NDCG terms of one or two runs; it does not combine with "
                "--metrics, --baseline or more than two runs"
            ),
            {},
        )
    return chosen


def report(options: Mapping[str, Any]) -> str:
    """The report for parsed `options`; raises EvaluationError for bad input."""
    paths = [options["run_a"], *(options["more_runs"] or ())]
    chosen = _check_options(options, paths)
    k = options["k"]
    if k is None:  # NDCG's K; with --metrics, the depth they need (the largest of their K)
        k = max(metric.k or 0 for metric in chosen) if chosen else 10
    settings = Settings.from_mapping({**options, "k": k})
    grade_map = parse_grade_map(options["grade_map"])
    pool = read_qrels(options["qrels"], format=options["qrels_format"], grade_map=grade_map)
    if len(paths) == 2 and _same_file(*paths):
        # As the web form refuses it: most likely one path typed twice.
        raise EvaluationError(
            gettext_noop(
                "RUN_A and RUN_B are the same file (%(path)s): a run compared with itself tells nothing. "
                "Give another run as RUN_B, or leave RUN_B out to score one run"
            ),
            {"path": paths[1]},
        )
    labels = default_labels(len(paths))
    for i, j in combinations(range(len(paths)), 2):
        if _same_file(paths[i], paths[j]):
            raise EvaluationError(
                gettext_noop(
                    "runs %(a)s and %(b)s are the same file (%(path)s): a run compared with itself tells "
                    "nothing. Give each run once"
                ),
                {"a": labels[i], "b": labels[j], "path": paths[j]},
            )
    if _systems_report(options):
        chosen = chosen or (ndcg.METRIC.at(settings.k),)
        runs = [
            evaluate_run(pool, read_run(path, format=options["run_format"]), settings, metrics=chosen)
            for path in paths
        ]
        shape = compare_systems(runs, baseline=options["baseline"], family=options["family"])
        metrics = runs[0].metrics
        render_systems = {
            "text": systems_reports.render_text,
            "json": systems_reports.render_json,
            "csv": systems_reports.render_csv,
        }[options["format"]]
        return render_systems(shape, metrics, grade_map=format_grade_map(grade_map))
    results = [evaluate_run(pool, read_run(path, format=options["run_format"]), settings) for path in paths]
    comparison = compare_results(*results) if len(results) == 2 else None
    render = {"text": render_text, "json": render_json, "csv": render_csv}[options["format"]]
    # A breakdown computes per-position terms, which can still refuse (K): callers catch that too.
    return render(results, comparison, breakdown=options["breakdown"], grade_map=format_grade_map(grade_map))


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # a file that cannot be read is reported by its reader
        return False


def write_and_exit(text: str, stdout: TextIO | None) -> NoReturn:
    """Write the report from the command line and end the process, status 0.

    The report is out and nothing was opened that needs closing: skip the interpreter's
    teardown, which would spend ~0.1 s freeing millions of parsed IDs (mypy's --fast-exit does
    the same). A reader that stopped reading (`| head`) ends it with status 1, as for other
    shell tools; a target that cannot be written (a full disk) with one error line, status 2.
    """
    if stdout is None:  # started with stdout closed (`>&-`): Python then has no sys.stdout
        fail("cannot write the report: standard output is closed")
    try:
        stdout.write(text)
        stdout.flush()
    except BrokenPipeError:
        os._exit(1)
    except OSError as error:
        fail(f"cannot write the report: {error.strerror or error}")
    if sys.stderr is not None:  # started with stderr closed (`2>&-`): the report is out, status 0
        sys.stderr.flush()
    os._exit(0)


def fail(message: str) -> NoReturn:
    """One line on stderr, status 2: the same line Django prints for the command's CommandError."""
    if sys.stderr is not None:  # closed (`2>&-`): the status alone says it
        sys.stderr.write(f"CommandError: {message}\n")
        sys.stderr.flush()
    os._exit(2)


def _add_django_options(parser: ArgumentParser) -> None:
    """The options Django's parser puts before every command's own, in its order: so that this
    parser reads abbreviations (--trace, --form) and ambiguities (--fo) exactly as Django's does,
    and --help lists them. SUPPRESS: an option appears in the result only when it is given."""
    parser.add_argument(
        "--version",
        action="version",
        version=metadata.version("django"),  # as django.get_version(), without importing Django
        help="Show program's version number and exit.",
    )
    parser.add_argument(
        "-v",
        "--verbosity",
        type=int,
        choices=[0, 1, 2, 3],
        default=SUPPRESS,
        help="Verbosity level; 0=minimal output, 1=normal output, 2=verbose output, 3=very verbose output",
    )
    parser.add_argument("--settings", default=SUPPRESS, help="The Python path to a settings module.")
    parser.add_argument("--pythonpath", default=SUPPRESS, help="A directory to add to the Python path.")
    for flag, text in (
        ("--traceback", "Display a full stack trace on CommandError exceptions."),
        ("--no-color", "Don't colorize the command output."),
        ("--force-color", "Force colorization of the command output."),
    ):
        parser.add_argument(flag, action="store_true", default=SUPPRESS, help=text)


DJANGO_DESTINATIONS = frozenset(
    {"verbosity", "settings", "pythonpath", "traceback", "no_color", "force_color"}
)


def main(argv: Sequence[str]) -> None:
    """`manage.py evaluate ARGS` without Django (argv is ARGS): ends the process, or returns when
    an option of Django's own is given, for manage.py to run Django's command instead."""
    parser = ArgumentParser(prog="manage.py evaluate", description=HELP)
    _add_django_options(parser)
    add_arguments(parser)
    # argparse would print the usage too; bad input gets exactly one line and status 2.
    parser.error = fail  # type: ignore[method-assign,assignment]
    options = vars(parser.parse_args(argv))
    if DJANGO_DESTINATIONS & options.keys():
        return
    try:
        text = report(options)
    except EvaluationError as error:
        fail(str(error))
    write_and_exit(text, sys.stdout)
