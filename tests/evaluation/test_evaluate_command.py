"""`manage.py evaluate`: its outputs, its JSON interface and its one-line errors with exit status 2."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.formats import read_qrels, read_run
from evaluation.metrics import PositionRow, Settings, evaluate_run

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / ".." / "shared" / "oracles" / "trec_eval"
QRELS, RESULTS, TRUNC = (str(ORACLE / name) for name in ("qrels.test", "results.test", "results.trunc"))
TREC_EVAL = ("--unjudged", "zero", "--ties", "docid-desc")


def evaluate(*args: str) -> str:
    out = io.StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def evaluate_json(*args: str) -> dict[str, Any]:
    return json.loads(evaluate(*args, "--format", "json"))


def csv_report(text: str) -> tuple[dict[str, Any], list[list[str]]]:
    """The `# section {json}` lines and the table rows after them, read as evaluation/README.md says."""
    lines = text.splitlines(keepends=True)
    sections: dict[str, Any] = {}
    while lines and lines[0].startswith("#"):
        words = lines.pop(0).split(" ", 2)
        if words[1] in {"settings", "counts", "systems", "comparison"}:
            sections[words[1]] = json.loads(words[2])
    return sections, list(csv.reader(lines))


def manage(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "evaluate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_text_table_prints_trec_evals_values() -> None:
    expected = {}
    for line in (ORACLE / "out.test.aq").read_text().splitlines():
        measure, topic, value = line.split()
        if measure == "ndcg_cut_10":
            expected[topic] = value
    rows = [line.split("\t") for line in evaluate(QRELS, RESULTS, *TREC_EVAL).splitlines()]
    table = {row[1]: row[2] for row in rows if row[0].strip() == "ndcg_cut_10"}
    assert table == expected


def test_the_text_summary_states_counts_and_policies_in_words() -> None:
    text = evaluate(QRELS, RESULTS, TRUNC, *TREC_EVAL)
    assert "Queries: 3 in the pool, 3 evaluated, 0 with zero IDCG, 0 excluded." in text
    assert "missing from the run: 1" in text
    assert "broken by document ID, descending (trec_eval's rule)" in text
    assert "paired randomization (sign-flip) test" in text and "paired t-test" in text


def test_the_json_interface_has_exactly_the_documented_shape() -> None:
    document = evaluate_json(QRELS, RESULTS, TRUNC, *TREC_EVAL, "--seed", "3")
    assert list(document) == ["settings", "counts", "systems", "comparison", "queries"]
    assert document["settings"] == {
        "k": 10,
        "gain": "linear",
        "unjudged": "zero",
        "zero_idcg": "zero",
        "ties": "docid-desc",
        "missing_queries": "zero",
        "extra_queries": "error",
        "seed": 3,
        "grade_map": None,
    }
    counts = document["counts"]
    assert set(counts) == {
        "queries",
        "evaluated",
        "zero_idcg",
        "excluded",
        "missing_from_run",
        "unjudged_in_top_k",
        "extra_queries_skipped",
    }
    assert counts["missing_from_run"] == {"a": 0, "b": 1}
    assert set(counts["unjudged_in_top_k"]) == {"a", "b"}
    assert document["systems"]["a"]["name"] == "results.test"
    assert set(document["systems"]["b"]) == {"name", "mean", "micro"}
    assert set(document["comparison"]) == {
        "mean_delta",
        "wins",
        "ties",
        "losses",
        "randomization_p",
        "t_test_p",
        "delta_ci95",
    }
    assert len(document["comparison"]["delta_ci95"]) == 2
    first = document["queries"][0]
    assert set(first) == {"query", "a", "b", "delta"}
    assert set(first["a"]) == {"dcg", "idcg", "ndcg"}
    assert [q["query"] for q in document["queries"]] == list(read_qrels(QRELS))


def test_the_json_numbers_are_the_engines_full_precision_floats() -> None:
    document = evaluate_json(QRELS, RESULTS, *TREC_EVAL)
    result = evaluate_run(read_qrels(QRELS), read_run(RESULTS), Settings(unjudged="zero", ties="docid-desc"))
    assert document["systems"]["a"]["mean"] == result.mean
    assert document["systems"]["a"]["micro"] == result.micro
    assert [q["a"]["ndcg"] for q in document["queries"]] == result.ndcg.tolist()
    assert "b" not in document["systems"] and "comparison" not in document
    assert "delta" not in document["queries"][0]


def test_breakdown_adds_every_term_for_every_query_and_system() -> None:
    document = evaluate_json(QRELS, RESULTS, TRUNC, *TREC_EVAL, "--breakdown", "--k", "3")
    fields = list(PositionRow.__dataclass_fields__)
    for query in document["queries"]:
        for system in ("a", "b"):
            entry = query[system]
            assert [row["rank"] for row in entry["positions"]] == [1, 2, 3]
            assert all(list(row) == fields for row in entry["positions"] + entry["ideal"])
            assert entry["positions"][-1]["cumulative"] == entry["dcg"]
            assert entry["ideal"][-1]["cumulative"] == entry["idcg"]
    missing = next(q for q in document["queries"] if q["query"] not in read_run(TRUNC))
    assert all(row["doc_id"] is None and row["contribution"] == 0.0 for row in missing["b"]["positions"])


def test_an_excluded_query_has_null_ndcg_and_delta(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 A 3\nq1 0 B 1\nq2 0 Z 0\n")
    runs = tmp_path / "a.txt", tmp_path / "b.txt"
    for run in runs:
        run.write_text("q1 Q0 B 1 2.0 s\nq2 Q0 Z 1 1.0 s\n")
    document = evaluate_json(str(qrels), *map(str, runs), "--zero-idcg", "exclude")
    q2 = document["queries"][1]
    assert q2["a"]["ndcg"] is None and q2["delta"] is None
    assert document["counts"]["zero_idcg"] == 1 and document["counts"]["excluded"] == 1
    assert document["counts"]["evaluated"] == 1


def test_csv_output_has_one_full_precision_row_per_query() -> None:
    _, rows = csv_report(evaluate(QRELS, RESULTS, TRUNC, *TREC_EVAL, "--format", "csv"))
    assert rows[0] == ["query_id", "a_dcg", "a_idcg", "a_ndcg", "b_dcg", "b_idcg", "b_ndcg", "delta"]
    document = evaluate_json(QRELS, RESULTS, TRUNC, *TREC_EVAL)
    assert [float(row[3]) for row in rows[1:]] == [q["a"]["ndcg"] for q in document["queries"]]
    assert [float(row[7]) for row in rows[1:]] == [q["delta"] for q in document["queries"]]


@pytest.mark.parametrize("breakdown", [(), ("--breakdown",)])
def test_csv_output_states_the_settings_counts_and_means_first(breakdown: tuple[str, ...]) -> None:
    """The contract: every report states the counts and the rules; a bare CSV table did not."""
    args = (QRELS, RESULTS, TRUNC, "--unjudged", "zero", "--ties", "docid-desc", "--zero-idcg", "exclude")
    sections, rows = csv_report(evaluate(*args, *breakdown, "--format", "csv"))
    document = evaluate_json(*args)
    assert sections == {key: document[key] for key in ("settings", "counts", "systems", "comparison")}
    assert sections["settings"]["zero_idcg"] == "exclude"
    assert sections["counts"]["missing_from_run"] == {"a": 0, "b": 1}
    assert rows[0][0] == "query_id"


def test_csv_quotes_every_field_of_a_row_holding_a_hash(tmp_path: Path) -> None:
    """IDs like `page#2` are common; unquoted, a reader skipping `#` comments would cut them short."""
    (tmp_path / "pool.txt").write_text("#q 0 page#2 3\n#q 0 page 1\nq2 0 x 2\n")
    (tmp_path / "run.txt").write_text("#q Q0 page#2 1 2.0 s\n#q Q0 page 2 1.0 s\nq2 Q0 x 1 1.0 s\n")
    args = (str(tmp_path / "pool.txt"), str(tmp_path / "run.txt"), "--format", "csv")
    for breakdown in ((), ("--breakdown",)):
        text = evaluate(*args, *breakdown)
        sections, rows = csv_report(text)
        assert sections["counts"]["queries"] == 2
        table = text.splitlines()[len(text.splitlines()) - len(rows) :]
        assert [line for line in table if "#" in line and not line.startswith('"')] == []
        assert {row[0] for row in rows[1:]} == {"#q", "q2"}
    _, rows = csv_report(evaluate(*args, "--breakdown"))
    assert "page#2" in {row[4] for row in rows[1:]}


def test_run_names_from_odd_file_names_keep_every_report_one_line_per_section_and_utf8(
    tmp_path: Path,
) -> None:
    """A file name holding U+2028 must not split the CSV's `# systems` line for str.splitlines();
    one with a byte that is not UTF-8 must not put that raw byte into the JSON and CSV reports; one
    holding a line feed must not break the text table's header line."""
    import os

    pool = tmp_path / "pool.txt"
    pool.write_text("q1 0 A 3\nq1 0 B 1\n")
    names = ["run\u2028x.txt", "run\x85y.txt", "run\nz.txt", os.fsdecode(b"run\xffw.txt")]
    for name in names:
        (tmp_path / name).write_text("q1 Q0 B 1 3 t\nq1 Q0 A 2 2 t\n")
    for a, b in ((names[0], names[1]), (names[2], names[3])):
        args = (str(pool), str(tmp_path / a), str(tmp_path / b))
        for fmt in ("csv", "json", "text"):
            text = evaluate(*args, "--format", fmt)
            text.encode("utf-8")  # strict: no surrogate-escaped byte left
            if fmt == "csv":
                sections, rows = csv_report(text)
                assert set(sections) == {"settings", "counts", "systems", "comparison"}
                assert len(text.splitlines()) == len(text.split("\n")) - 1 == 1 + 4 + 1 + 1
            elif fmt == "json":
                names_read = [s["name"] for s in json.loads(text)["systems"].values()]
                assert names_read == ([a, b] if a == names[0] else [names[2], "run\ufffdw.txt"])
            else:
                header = text.splitlines()[0]
                assert header.startswith("# ndcg_cut_10") and header.endswith("b-a"), header


def test_text_breakdown_writes_out_the_arithmetic() -> None:
    text = evaluate(QRELS, RESULTS, *TREC_EVAL, "--breakdown", "--k", "2")
    assert "query 301, system a: DCG" in text
    assert "candidate-only contrast, not NDCG" in text


def test_text_breakdown_columns_line_up_whatever_the_id_length(tmp_path: Path) -> None:
    """No row's numbers move with its ID's length; wide (Chinese) characters count twice."""
    (tmp_path / "pool.txt").write_text(
        "q 0 文档一 3\nq 0 a 1\nq 0 very-long-document-id 2\n", encoding="utf-8"
    )
    (tmp_path / "run.txt").write_text("q Q0 a 1 3 s\nq Q0 文档一 2 2 s\nq Q0 x 3 2 s\n", encoding="utf-8")
    text = evaluate(
        str(tmp_path / "pool.txt"), str(tmp_path / "run.txt"), "--breakdown", "--k", "4",
        "--unjudged", "zero", "--ties", "expected", "--gain", "exponential",
    )  # fmt: skip
    table = [line for line in text.splitlines() if line.startswith("    ")]
    assert len(table) == 2 + 4 + 3  # two header lines, K ranking rows, the pool's three ideal rows
    assert any("文档一" in line for line in table) and any("very-long-document-id" in line for line in table)

    def column(line: str, mark: str) -> int:
        before = line[: line.index(mark)]
        return len(before) + sum(1 for c in before if "\u4e00" <= c <= "\u9fff")  # display columns

    for mark in (" / ", " = "):
        assert len({column(line, mark) for line in table}) == 1, table
    # The last column's right edge: "cumulative" in the header, the running totals below it.
    assert len({column(line, " = ") + len(line.split(" = ")[1].split("  tied")[0]) for line in table}) == 1


def test_bad_input_through_call_command_is_a_command_error_with_status_2() -> None:
    with pytest.raises(
        CommandError, match=r"qrels\.rel_level, line \d+: query '\d+', document '.+': grade"
    ) as caught:
        evaluate(str(ORACLE / "qrels.rel_level"), RESULTS)
    assert caught.value.returncode == 2
    with pytest.raises(CommandError, match="K must be a positive integer, got True"):
        call_command("evaluate", QRELS, RESULTS, k=True, stdout=io.StringIO())


def test_one_run_given_twice_is_refused_as_the_web_form_refuses_it(tmp_path: Path) -> None:
    """A file compared with itself gives every delta +0.0000: refused, as the web form does."""
    done = manage(QRELS, RESULTS, str(ORACLE / ".." / "trec_eval" / "results.test"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("CommandError: RUN_A and RUN_B are the same file (")
    assert "a run compared with itself tells nothing" in done.stderr and done.stderr.count("\n") == 1
    # Two files with the same content are two runs: compared, every delta 0.
    copy = tmp_path / "copy.test"
    copy.write_bytes(Path(RESULTS).read_bytes())
    assert evaluate_json(QRELS, RESULTS, str(copy), *TREC_EVAL)["comparison"]["mean_delta"] == 0.0


def test_a_grade_map_lets_trec_evals_graded_qrels_in_and_is_recorded_with_the_result() -> None:
    # The map changes every number, so a report without it could not be reproduced.
    document = evaluate_json(str(ORACLE / "qrels.rel_level"), RESULTS, *TREC_EVAL, "--grade-map=4:3,-1:0")
    assert document["counts"]["queries"] == 3
    assert document["settings"]["grade_map"] == "-1:0,4:3"
    text = evaluate(str(ORACLE / "qrels.rel_level"), RESULTS, *TREC_EVAL, "--grade-map=4:3,-1:0")
    assert "grade map applied when reading QRELS: -1:0,4:3" in text
    assert "grade map: none (grades as read)" in evaluate(QRELS, RESULTS, *TREC_EVAL)


def test_json_output_ends_with_a_newline() -> None:
    assert evaluate(QRELS, RESULTS, *TREC_EVAL, "--format", "json").endswith("}\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((str(ORACLE / "qrels.rel_level"), RESULTS), "qrels.rel_level, line "),
        ((QRELS, RESULTS, "--k", "0"), "K must be a positive integer, got 0"),
        (
            (QRELS, RESULTS, *TREC_EVAL, "--k", "10001", "--breakdown"),
            "K may be at most 10000 for it, got 10001",
        ),
        ((QRELS, RESULTS, "--k", "1.5"), "'1.5' is not a whole number written with the digits 0-9"),
        # int() alone takes full-width digits, "+3" and " 3", unlike scores in files.
        ((QRELS, RESULTS, "--k", "\uff13"), "'\uff13' is not a whole number written with the digits 0-9"),
        ((QRELS, RESULTS, "--k", "+3"), "'+3' is not a whole number"),
        ((QRELS, RESULTS, "--seed", "1e3"), "argument --seed: '1e3' is not a whole number"),
        # The bound the app's comparisons store (the web form refuses the same): a seed from here
        # can always be rerun there.
        ((QRELS, RESULTS, "--seed", str(2**63)), f"seed must be an integer 0..{2**63 - 1}, got {2**63}"),
        ((QRELS, RESULTS, "--gain", "cubic"), "invalid choice: 'cubic'"),
        ((QRELS, "does-not-exist.txt"), "does-not-exist.txt: cannot read the file"),
        ((QRELS, RESULTS, "--k", "20"), "share the score"),  # the defaults refuse ties in the top K...
        (
            (QRELS, RESULTS, "--k", "20", "--ties", "docid-desc"),
            "has no grade in the pool",
        ),  # ...and unjudged IDs
        ((QRELS,), "the following arguments are required: RUN_A"),
    ],
)
def test_bad_input_exits_2_with_one_line_on_stderr(args: tuple[str, ...], message: str) -> None:
    result = manage(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message in result.stderr


def test_good_input_exits_0() -> None:
    result = manage(QRELS, RESULTS, *TREC_EVAL, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["counts"]["queries"] == 3


def test_csv_breakdown_has_one_row_per_term() -> None:
    _, table = csv_report(evaluate(QRELS, RESULTS, *TREC_EVAL, "--format", "csv", "--breakdown", "--k", "2"))
    rows = [dict(zip(table[0], row, strict=True)) for row in table[1:]]
    assert list(rows[0]) == ["query_id", "system", "table", *PositionRow.__dataclass_fields__]
    assert len(rows) == 3 * (2 + 2)  # three queries, K ranking rows and K ideal rows each
    document = evaluate_json(QRELS, RESULTS, *TREC_EVAL, "--k", "2")
    last = {(row["query_id"], row["table"]): float(row["cumulative"]) for row in rows}
    assert [last[(q["query"], "ranking")] for q in document["queries"]] == [
        q["a"]["dcg"] for q in document["queries"]
    ]


def test_a_csv_with_a_field_over_128_kib_reads_as_in_the_app(tmp_path: Path) -> None:
    """The csv module's field limit is process-wide: `evaluate` raises it too, or it would refuse
    a run file the app accepts (a fresh process here, as from the shell)."""
    note = "x" * 200_000
    pool = tmp_path / "pool.csv"
    pool.write_text(f"query_id,doc_id,grade,note\nq1,A,3,{note}\nq1,B,1,\n")
    run = tmp_path / "run.csv"
    run.write_text(f"query_id,doc_id,rank,note\nq1,B,1,{note}\nq1,A,2,\n")
    done = manage(str(pool), str(run), "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["systems"]["a"]["mean"] < 1.0


def test_a_report_that_cannot_be_written_is_one_error_line_not_a_traceback() -> None:
    """`evaluate ... > /dev/full` says so in one line, not a traceback ending in OSError."""

    class Full(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(28, "No space left on device")

    with pytest.raises(CommandError, match="cannot write the report: No space left on device") as caught:
        call_command("evaluate", QRELS, RESULTS, *TREC_EVAL, stdout=Full())
    assert caught.value.returncode == 2
    done = subprocess.run(
        f'"{sys.executable}" manage.py evaluate {QRELS} {RESULTS} --unjudged zero --ties docid-desc > '
        "/dev/full",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr == "CommandError: cannot write the report: No space left on device\n"
    closed = subprocess.run(  # stdout closed: one error line, not an AttributeError traceback
        f'"{sys.executable}" manage.py evaluate {QRELS} {RESULTS} --unjudged zero --ties docid-desc >&-',
        shell=True,
        cwd=ROOT,
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    assert (closed.returncode, closed.stderr) == (
        2,
        "CommandError: cannot write the report: standard output is closed\n",
    )
    # Only stderr closed (`2>&-`): the report is out, status 0, not 1 from flushing a closed stderr.
    quiet = subprocess.run(
        f'"{sys.executable}" manage.py evaluate {QRELS} {RESULTS} --unjudged zero --ties docid-desc 2>&-',
        shell=True,
        cwd=ROOT,
        capture_output=False,
        stdout=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    assert quiet.returncode == 0 and "ndcg_cut_10" in quiet.stdout
    # The same through Django's own parser (a Django option sends it there).
    closed = subprocess.run(
        f'"{sys.executable}" manage.py evaluate {QRELS} {RESULTS} --unjudged zero --ties docid-desc '
        "--traceback >&-",
        shell=True,
        cwd=ROOT,
        capture_output=False,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    assert (closed.returncode, closed.stderr) == (
        2,
        "CommandError: cannot write the report: standard output is closed\n",
    )


def test_a_zip_is_named_as_a_zip_not_as_bad_utf8(tmp_path: Path) -> None:
    """The app's export zip fed to `evaluate` is named a zip, not "not valid UTF-8: byte 0xfc"."""
    import zipfile

    archive = tmp_path / "pool-v1-qrels.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("pool-v1.qrels", "q1 0 A 3\n")
    done = manage(str(archive), str(archive))
    assert done.returncode == 2
    assert "zip archive" in done.stderr and "UTF-8" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "columns"),
    [
        ("abc", 3),
        ("文档", 4),
        ("e\u0301", 1),
        ("\u0e17\u0e35\u0e48\u0e14\u0e35", 2),
        ("a\u200db", 2),
        ("\u2764\ufe0f", 1),
    ],
)
def test_the_text_breakdown_counts_marks_and_joiners_as_no_column(text: str, columns: int) -> None:
    """Thai vowel signs (Mn), a variation selector and a zero-width joiner take no column."""
    from evaluation.reports import _display_width

    assert _display_width(text) == columns


def manage_env(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "manage.py", "evaluate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def test_the_shell_command_starts_without_django_and_django_options_go_through_django() -> None:
    """`manage.py evaluate` from the shell skips Django's setup (~0.8 s per call): with settings
    that cannot even be imported it still reports, and only an option of Django's own parser
    (here --traceback, -v) sends the call through Django, which then needs those settings."""
    broken = {"DJANGO_SETTINGS_MODULE": "no_such_settings_module"}
    fast = manage_env(QRELS, RESULTS, *TREC_EVAL, "--format", "json", **broken)
    assert fast.returncode == 0, fast.stderr
    assert json.loads(fast.stdout)["counts"]["queries"] == 3
    # Abbreviated as Django's parser allows ("--trace", "--verb 1").
    for django_option in ("--traceback", "-v2", "--verbosity=2", "--trace", "--verb=1", "--no-col"):
        slow = manage_env(QRELS, RESULTS, *TREC_EVAL, django_option, **broken)
        assert slow.returncode != 0
        assert "no_such_settings_module" in slow.stderr
    # The shell command's help lists Django's options too.
    helped = manage_env("--help", **broken)
    assert helped.returncode == 0 and "--traceback" in helped.stdout and "--grade-map" in helped.stdout


@pytest.mark.parametrize(
    "args",
    [
        (QRELS, RESULTS, TRUNC, *TREC_EVAL),
        (QRELS, RESULTS, TRUNC, *TREC_EVAL, "--format", "json", "--breakdown", "--k", "3"),
        (QRELS, RESULTS, *TREC_EVAL, "--format", "csv", "--seed", "7"),
        (QRELS, RESULTS, "--k", "20"),  # refused: ties in the top K
        (QRELS, RESULTS, "--k", "x"),  # refused by the parser
        (QRELS, RESULTS, "--fo", "json"),  # ambiguous for Django's parser (--force-color): for both
        (QRELS, RESULTS, *TREC_EVAL, "--form", "json"),
        (QRELS,),
    ],
)
def test_the_shell_command_and_djangos_command_print_the_same(args: tuple[str, ...]) -> None:
    fast = manage(*args)
    through_django = manage(*args, "--verbosity=1")  # Django's default: changes nothing but the path
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        through_django.returncode,
        through_django.stdout,
        through_django.stderr,
    )
    assert fast.stdout or fast.stderr.startswith("CommandError: ")
    assert call_report(*args) == (fast.stdout if fast.returncode == 0 else None)


def call_report(*args: str) -> str | None:
    """The report call_command (a caller inside Django) gets, or None when it refuses."""
    try:
        return evaluate(*args)
    except CommandError:
        return None
