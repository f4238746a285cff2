"""The column pass of the TREC readers (evaluation/formats/columns.py) against their line pass.

A usual file is split with numpy; anything else goes line by line. Both must give the same
Pool or Run (the same queries, documents, grades or scores to the last bit, line numbers and ID
words) or the same error, whatever the file holds: the texts here mix usual lines with every
kind the column pass refuses (blank lines, lone CRs, tabs, extra fields, non-ASCII, control
characters, odd numbers, long IDs, duplicates, queries in separate blocks).
"""

from __future__ import annotations

import io
from itertools import chain

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from evaluation.formats import columns as columns_module
from evaluation.formats import trec
from evaluation.formats.columns import split_columns
from evaluation.metrics import EvaluationError, Pool, Run
from evaluation.metrics.lookup import encode_ids

# Each field: usual values, then odd ones (which send the file to the line pass, or to an error).
QUERIES = (["q1", "q2", "q10", "301", "Q-7"], ["问题", "q" * 70])
DOCS = (
    ["d1", "d2", "d3", "doc-10", "abcdefgh", "abcdefghi", "x" * 65, "D9"],
    ["文档", "d\x1fx", "d\x0bx", "d\u00a0x"],
)
SCORES = (
    [
        "1",
        "2.5",
        "-3",
        "1e5",
        "1E-3",
        "+.5",
        "5.",
        "0",
        "0.0",
        "-0",
        "2.2250738585072014e-308",
        "12345678901234567890.5",
    ],
    ["1e-400", "inf", "nan", "1_000", "0x10", "1e", "--1", "١"],
)
GRADES = (["0", "1", "2", "3"], ["4", "-1", "+1", "01", "2.0", "x"])
SPACES = ([" ", "\t", "  ", " \t "], [])
ENDS = (["\n", "\r\n"], ["\r", "\n\n", "  \n"])


def pick(draw: st.DrawFn, choices: tuple[list[str], list[str]], odd: bool) -> str:
    """A usual value, or (when the file may be odd, one time in eight) an odd one."""
    usual, unusual = choices
    if odd and unusual and draw(st.integers(0, 7)) == 0:
        return draw(st.sampled_from(unusual))
    return draw(st.sampled_from(usual))


def read(reader, data: bytes, *, lines_only: bool, monkeypatch: pytest.MonkeyPatch, **options) -> object:
    """What `reader` makes of `data` as an upload (a text stream over its bytes): the result, or
    the error's text."""
    with monkeypatch.context() as patch:
        if lines_only:
            patch.setattr(trec, "usual_bytes", lambda source: None)
        buffer = io.BytesIO(data)
        buffer.name = "upload.txt"  # as an upload is read: the errors name it
        stream = io.TextIOWrapper(buffer, encoding="utf-8-sig")
        try:
            return reader(stream, **options)
        except EvaluationError as error:
            return str(error)


def same_runs(a: Run, b: Run) -> None:
    assert a.query_ids == b.query_ids and a._docs == b._docs
    assert a._offsets.tolist() == b._offsets.tolist()
    if not a.rows:
        assert not b.rows
        return
    assert a._scores is not None and b._scores is not None
    assert a._scores.view(np.int64).tolist() == b._scores.view(np.int64).tolist()  # to the last bit
    assert a._lines is not None and b._lines is not None and a._lines.tolist() == b._lines.tolist()
    assert a._id_words is not None and b._id_words is not None
    assert a._id_words.tolist() == b._id_words.tolist()


@st.composite
def run_texts(draw: st.DrawFn) -> bytes:
    odd = draw(st.booleans())  # else a usual file, which the column pass takes
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        fields = [pick(draw, QUERIES, odd), "Q0", pick(draw, DOCS, odd), str(draw(st.integers(1, 99)))]
        fields += [pick(draw, SCORES, odd), "tag"]
        if draw(st.integers(0, 5)) == 0:
            fields += draw(st.lists(st.sampled_from(["x", "more"]), min_size=1, max_size=2))  # after the tag
        if odd and draw(st.integers(0, 9)) == 0:
            fields = fields[: draw(st.integers(0, 5))]  # too few
        lead = draw(st.sampled_from(["", "", "", " "]))
        body = "".join(f + pick(draw, SPACES, odd) for f in fields[:-1]) + (fields[-1] if fields else "")
        lines.append(lead + body + pick(draw, ENDS, odd))
    text = "".join(lines)
    if draw(st.booleans()):
        text = text.rstrip("\n")
    bom = "\ufeff" if draw(st.integers(0, 5)) == 0 else ""
    return (bom + text).encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(run_texts())
def test_a_run_reads_the_same_by_columns_and_by_lines(data: bytes) -> None:
    with pytest.MonkeyPatch.context() as patch:
        by_columns = read(trec.read_trec_run, data, lines_only=False, monkeypatch=patch)
        by_lines = read(trec.read_trec_run, data, lines_only=True, monkeypatch=patch)
    columns = split_columns(data, (0, 2, 4), 6, more=True)
    event("columns" if columns is not None else "lines only")
    if isinstance(by_lines, Run):
        assert isinstance(by_columns, Run), by_columns
        same_runs(by_columns, by_lines)
    else:
        assert by_columns == by_lines


@st.composite
def qrels_texts(draw: st.DrawFn) -> bytes:
    odd = draw(st.booleans())
    lines = []
    for _ in range(draw(st.integers(1, 12))):
        fields = [pick(draw, QUERIES, odd), "0", pick(draw, DOCS, odd), pick(draw, GRADES, odd)]
        if odd and draw(st.integers(0, 9)) == 0:
            fields = fields[: draw(st.integers(0, 3))] if draw(st.booleans()) else [*fields, "extra"]
        body = "".join(f + pick(draw, SPACES, odd) for f in fields[:-1]) + (fields[-1] if fields else "")
        lines.append(body + pick(draw, ENDS, odd))
    text = "".join(lines)
    if draw(st.booleans()):
        text = text.rstrip("\n")
    return text.encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(qrels_texts(), st.sampled_from([None, {4: 3, -1: 0}]))
def test_qrels_read_the_same_by_columns_and_by_lines(data: bytes, grade_map: dict[int, int] | None) -> None:
    with pytest.MonkeyPatch.context() as patch:
        by_columns = read(
            trec.read_trec_qrels, data, lines_only=False, monkeypatch=patch, grade_map=grade_map
        )
        by_lines = read(trec.read_trec_qrels, data, lines_only=True, monkeypatch=patch, grade_map=grade_map)
    event("columns" if split_columns(data, (0, 2, 3), 4, more=False) is not None else "lines only")
    if isinstance(by_lines, Pool):
        assert isinstance(by_columns, Pool), by_columns
        assert [(q, list(by_columns[q].items())) for q in by_columns] == [
            (q, list(by_lines[q].items())) for q in by_lines
        ]
        if by_columns._id_words is not None:  # made from the file: the pool's own order
            assert (
                by_columns._id_words.tolist()
                == encode_ids(list(chain.from_iterable(by_lines._grades.values()))).tolist()
            )  # type: ignore[union-attr]
    else:
        assert by_columns == by_lines


def test_a_usual_file_is_read_by_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    # The column pass must take the usual file (else the tests above compare the line pass with
    # itself): CRLF, a BOM, tabs, no final line end, queries in two blocks.
    data = "\ufeffq1 Q0 d1 1 2.5 t\r\nq1\tQ0\td2 2 1.5 t\r\nq2 Q0 d1 1 3 t\nq1 Q0 d3 3 0.5 t".encode()
    taken = []
    real = trec._columns_run
    monkeypatch.setattr(trec, "_columns_run", lambda *args: taken.append(real(*args)) or taken[-1])
    run = read(trec.read_trec_run, data, lines_only=False, monkeypatch=monkeypatch)
    assert taken and taken[0] is run and isinstance(run, Run)
    assert run.as_dict() == {"q1": [("d1", 2.5), ("d2", 1.5), ("d3", 0.5)], "q2": [("d1", 3.0)]}
    assert run.lines_of("q1") == (1, 2, 4)
    qrels = b"q1 0 d1 3\nq1 0 d2 0\nq2 0 d1 2\n"
    pool = read(trec.read_trec_qrels, qrels, lines_only=False, monkeypatch=monkeypatch)
    assert isinstance(pool, Pool) and pool._id_words is not None
    assert dict(pool["q1"]) == {"d1": 3, "d2": 0} and dict(pool["q2"]) == {"d1": 2}


def test_a_file_read_by_path_takes_the_column_pass_too(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "run.txt"
    path.write_bytes(
        b"".join(b"q%d Q0 d%d %d %d.25 t\n" % (q, d, d, 100 - d) for q in range(50) for d in range(30))
    )
    assert split_columns(path.read_bytes(), (0, 2, 4), 6, more=True) is not None
    run = trec.read_trec_run(path)
    assert run.rows == 1500 and run.lines_of("q49")[-1] == 1500
    assert run._id_words is not None and run._id_words.tolist() == encode_ids(run._docs).tolist()  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "size", [columns_module._BYTES - 5, columns_module._BYTES + 7, 3 * columns_module._BYTES]
)
def test_blocks_end_at_line_ends_whatever_the_size(size: int) -> None:
    line = b"q1 Q0 d 1 2 t\n"
    data = line * (size // len(line)) + b"q2 Q0 e 1 2 t"
    columns = split_columns(data, (0, 2, 4), 6, more=True)
    assert columns is not None and columns.lines == size // len(line) + 1
    assert columns.strings(1) == ["d"] * (columns.lines - 1) + ["e"]


def test_the_column_scores_are_floats_values_and_refusals() -> None:
    # numpy reads the joined column, float() each token: on the digits, signs, "." and "e" they
    # agree on every value and on what is not a number (20,000 random tokens of that alphabet);
    # a leading "+" both read is left to the line pass, which refuses it.
    rng = np.random.default_rng(3)
    alphabet = np.array(list("0123456789+-.eE"))
    tokens = ["".join(rng.choice(alphabet, rng.integers(1, 8))) for _ in range(20_000)]
    tokens += [repr(float(x)) for x in rng.standard_normal(5000) * 10.0 ** rng.integers(-300, 300, 5000)]
    for token in tokens:
        data = f"q Q0 d 1 {token} t\n".encode()
        columns = split_columns(data, (0, 2, 4), 6, more=True)
        assert columns is not None
        ours = trec._column_scores(columns, 2)
        try:
            theirs = float(token)
        except ValueError:
            assert ours is None, token
            continue
        if (
            not np.isfinite(theirs)
            or (theirs == 0.0 and any(c in "123456789" for c in token.lower().split("e")[0]))
            or token.startswith("+")  # float() reads it; the number rule refuses it
        ):
            assert ours is None, token  # refused by line, as the line pass does
        else:
            assert ours is not None and ours[0].view(np.int64) == np.float64(theirs).view(np.int64), token
