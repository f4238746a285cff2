"""Opening what the readers read and the writers write: paths, streams, pipes. Pure.

Text is UTF-8 (a BOM is accepted); a byte that is not, a zip or a gzip file is refused naming the
line, so every reader names the file and the line alike.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from evaluation.metrics.policies import EvaluationError, gettext_noop

Source = str | os.PathLike[str] | IO[str]


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def text_lines(text: str) -> list[str]:
    """The lines of a text as files and editors count them. str.splitlines() also breaks at \\f,
    \\x1c-\\x1e, \\x85, U+2028 and U+2029, which JSON strings may hold: a valid line would be cut
    in two, and every later line number off by one."""
    return _LINE_BREAK.split(text)


def iter_text_lines(text: str, *, keepends: bool = False) -> Iterator[str]:
    """text_lines(text), one at a time: a list of every line of a large upload costs as much
    memory as its text again. `keepends`: each line with its line break, as a text stream opened
    with newline="" gives them (the csv module's input), and no empty line after the last break."""
    start = 0
    for found in _LINE_BREAK.finditer(text):
        yield text[start : found.end() if keepends else found.start()]
        start = found.end()
    if start < len(text) or not keepends:
        yield text[start:]


def source_name(source: Source) -> str:
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def replayable(source: Source) -> Source:
    """`source`, readable twice: a path that is not a regular file (a pipe, `/dev/stdin`, the
    shell's `<(zcat qrels.gz)`) gives its bytes once, so they are read into memory and served
    like an upload (the TREC readers' second pass read an empty pipe and said "no judgments
    found"). Bytes that are not UTF-8 are refused here, naming the line, as for a file."""
    if not isinstance(source, str | os.PathLike):
        return source
    try:
        if stat.S_ISREG(os.stat(source).st_mode):
            return source
        data = Path(source).read_bytes()
    except OSError:
        return source  # the reader reports it, with the reason
    name = os.fspath(source)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise _utf8_error_in(io.BytesIO(data), name) from None
    buffer = io.BytesIO(data)
    buffer.name = name  # the readers name the file in their errors
    return io.TextIOWrapper(buffer, encoding="utf-8-sig")


def usual_bytes(source: Source) -> bytes | None:
    """The whole of `source` as bytes when that is cheap, for the column pass of the TREC readers
    (evaluation/formats/columns.py): a file by its path, or an upload's text stream over its
    bytes (io.BytesIO: its bytes are shared, not copied) not yet read from; else None."""
    if isinstance(source, str | os.PathLike):
        try:
            return Path(source).read_bytes()
        except OSError:
            return None  # the line reader reports it, with the reason
    if (
        isinstance(source, io.TextIOWrapper)
        and codecs.lookup(source.encoding).name == "utf-8-sig"  # as files are read: a BOM is dropped
        and isinstance(source.buffer, io.BytesIO)
        and source.tell() == 0
    ):
        return source.buffer.getvalue()
    return None


def with_source[T](
    source: Source, read: Callable[[Callable[[], Iterator[str]], str], T], *, newline: str | None = None
) -> T:
    """Call `read(open_lines, name)`; `open_lines()` (re)opens the text, so a reader can take a
    second, careful pass after its fast pass failed. Text is UTF-8 (a BOM is accepted); a decoding
    error becomes an `EvaluationError` naming the line."""
    name = source_name(source)
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        handles: list[IO[str]] = []

        def open_lines() -> Iterator[str]:
            try:
                handle = open(path, encoding="utf-8-sig", newline=newline)  # noqa: SIM115 - closed below
            except OSError as error:
                raise EvaluationError(
                    gettext_noop("cannot read the file: %(reason)s"),
                    {"reason": error.strerror or error},
                    source=name,
                ) from None
            handles.append(handle)
            return handle

        try:
            return read(open_lines, name)
        except UnicodeDecodeError:
            raise _utf8_error(path, name) from None
        finally:
            for handle in handles:
                handle.close()
    stream = source
    if stream.seekable():
        start = stream.tell()

        def open_stream() -> Iterator[str]:
            stream.seek(start)
            return iter(stream)

        return read(open_stream, name)
    lines = list(stream)  # a pipe: keep the lines for the second pass
    return read(lambda: iter(lines), name)


# Every zip starts with a local file header; no UTF-8 text file can ("PK" + two control bytes).
ZIP_MAGIC = b"PK\x03\x04"
GZIP_MAGIC = b"\x1f\x8b"  # RFC 1952; 0x8b cannot start a UTF-8 character


def _utf8_error(path: Path, name: str) -> EvaluationError:
    # Text mode does not say where decoding failed: find the line in the raw bytes.
    with open(path, "rb") as raw:
        return _utf8_error_in(raw, name)


def _utf8_error_in(raw: IO[bytes], name: str) -> EvaluationError:
    """The error for the first byte of `raw` (at its start) that is not UTF-8, naming its line."""
    head = raw.read(len(ZIP_MAGIC))
    if head == ZIP_MAGIC:  # e.g. the app's export: say so, not "byte 0xfc"
        return EvaluationError(
            gettext_noop("the file is a zip archive: unzip it and give the text file inside it"),
            source=name,
            line=1,
        )
    if head.startswith(GZIP_MAGIC):
        return EvaluationError(
            gettext_noop("the file is gzip-compressed: decompress it (gunzip) and give the text file"),
            source=name,
            line=1,
        )
    raw.seek(0)
    for number, line in enumerate(raw, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            return EvaluationError(
                gettext_noop(
                    "the file is not valid UTF-8: byte %(byte)s at column %(column)s (save it as UTF-8)"
                ),
                {"byte": f"0x{line[error.start]:02x}", "column": error.start + 1},
                source=name,
                line=number,
            )
    return EvaluationError(gettext_noop("the file is not valid UTF-8"), source=name)


def open_target(target: Source, *, newline: str | None = None) -> tuple[IO[str], bool]:
    """A writable text stream for `target` and whether the caller must close it."""
    if isinstance(target, str | os.PathLike):
        return open(target, "w", encoding="utf-8", newline=newline), True  # noqa: SIM115
    if isinstance(target, io.TextIOBase) or hasattr(target, "write"):
        return target, False
    raise TypeError(f"cannot write to {target!r}")
