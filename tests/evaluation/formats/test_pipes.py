"""Files that can be read once (a pipe, `/dev/stdin`, the shell's `<(zcat qrels.gz)`).

The TREC readers may read a file twice (the column pass, then the line passes): a pipe's second
read is empty, which would say "no judgments found" about a file full of them.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from evaluation.formats import read_qrels, read_run
from evaluation.metrics import EvaluationError


def pipe_of(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as out:
            out.write(data)

    threading.Thread(target=write, daemon=True).start()
    return path


@pytest.mark.parametrize(
    "text",
    [
        b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n",  # read by columns
        b"q1 Q0 d1 1 2.0 t\n\nq1 Q0 d2 2 1.0 t\n",  # a blank line: the line passes read it again
        b"q1\x0bQ0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\n",  # a vertical tab: the careful pass too
    ],
)
def test_a_run_in_a_pipe_is_read_whole_by_every_pass(tmp_path: Path, text: bytes) -> None:
    run = read_run(pipe_of(tmp_path, text))
    assert run.as_dict() == {"q1": [("d1", 2.0), ("d2", 1.0)]}


def test_qrels_in_a_pipe_with_a_blank_line(tmp_path: Path) -> None:
    pool = read_qrels(pipe_of(tmp_path, b"q1 0 d1 2\n\nq1 0 d2 0\n"))
    assert dict(pool["q1"]) == {"d1": 2, "d2": 0}


def test_a_pipe_that_is_not_utf8_is_refused_by_line_and_byte(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match=r"line 2: the file is not valid UTF-8: byte 0xff at column 7"):
        read_qrels(pipe_of(tmp_path, b"q1 0 d1 2\nq1 0 d\xff2 0\n"))
