"""A whitespace-separated text as columns, split with numpy: the first pass of the TREC readers.

Only the usual file is taken (printable ASCII, LF or CRLF, no blank line); anything else gets
None and the reader goes on line by line, which names what is wrong. Both ways must give the
same result: tests/evaluation/test_columns.py holds them to it.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.metrics.lookup import WORD, IdWords, WordsWriter

# Every byte a usual file holds: printable ASCII, space, tab, CR, LF. The C whitespace the line
# readers also split at (\v, \f) and the information separators (U+001C-U+001F, which Python
# splits at) are not here: such a file is read line by line.
_USUAL = bytes(range(0x20, 0x7F)) + b"\t\r\n"
_LINES = 1 << 9  # lines joined at a time: the temporary arrays (8 bytes a byte) stay small
_WORD_LINES = 1 << 12  # fields turned into words at a time
_STRING_LINES = 1 << 12  # fields turned into strings at a time
_BYTES = 1 << 18  # bytes split at a time: the temporary arrays are ~7 times this
_CHECKED = 1 << 22  # bytes checked for unusual ones at a time (copied, then deleted)
_NEWLINE = 10


@dataclass(frozen=True, eq=False)
class Columns:
    """The wanted fields of every line: field `wanted[j]` of line i is
    text[starts[i, j]:ends[i, j]]; line i is line i + 1 of the file (no line is blank)."""

    text: np.ndarray  # the file's bytes (uint8), CRLF read as LF
    starts: np.ndarray  # (lines, len(wanted)) int32 (int64 for a file over 2 GB)
    ends: np.ndarray  # (lines, len(wanted))

    @property
    def lines(self) -> int:
        return len(self.starts)

    def strings(self, j: int) -> list[str]:
        """Column j as strings, decoded a block of lines at a time: the whole column joined, then
        decoded, then split would hold it three times over beside the list of strings."""
        found: list[str] = []
        for low in range(0, self.lines, _STRING_LINES):
            joined = self.joined(j, low, min(low + _STRING_LINES, self.lines))
            found += codecs.decode(memoryview(joined)[:-1], "ascii").split("\n")
        return found

    def words(self, j: int) -> IdWords:
        """Column j as the engine's words, read straight from the text; the offsets are widened
        a block at a time, not for the whole column at once."""

        def offsets(low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
            starts = self.starts[low:high, j].astype(np.int64)
            return starts, self.ends[low:high, j] - starts

        writer = WordsWriter(self.lines)
        # Words are read whole: the fields ending in the text's last WORD - 1 bytes are read from
        # a zero-padded copy of its end.
        ends = self.ends[:, j]
        inside = int(np.searchsorted(ends, len(self.text) - WORD + 1, side="right"))
        for low in range(0, inside, _WORD_LINES):
            writer.write(low, self.text, *offsets(low, min(low + _WORD_LINES, inside)))
        if inside < self.lines:
            starts, lengths = offsets(inside, self.lines)
            base = int(starts[0])
            tail = np.zeros(len(self.text) - base + WORD, dtype=np.uint8)
            tail[: len(self.text) - base] = self.text[base:]
            writer.write(inside, tail, starts - base, lengths)
        return writer.words()

    def only(self, j: int) -> Columns:
        """Column j alone (a copy of its offsets): the others' are let go with this one."""
        return Columns(self.text, self.starts[:, j : j + 1].copy(), self.ends[:, j : j + 1].copy())

    def field(self, line: int, j: int) -> str:
        return self.text[self.starts[line, j] : self.ends[line, j]].tobytes().decode("ascii")

    def joined(self, j: int, first: int = 0, stop: int | None = None) -> np.ndarray:
        """Column j's values of lines `first` to `stop` (0-based, stop excluded; default all), each
        followed by LF."""
        starts, ends = self.starts[first:stop, j], self.ends[first:stop, j]
        sizes = ends - starts + 1  # the value and its LF
        total = int(sizes.sum())
        joined = np.empty(total, dtype=np.uint8)
        done = 0
        last = len(self.text) - 1
        for low in range(0, len(starts), _LINES):
            block = sizes[low : low + _LINES]
            span = int(block.sum())
            # Every byte of a value comes from its offset in the text; its LF's place gets the
            # byte after the value (a separator, or past the end: clipped), then an LF.
            source = np.repeat(starts[low : low + _LINES] - (done + np.cumsum(block) - block), block)
            source += np.arange(done, done + span)
            np.minimum(source, last, out=source)
            joined[done : done + span] = self.text[source]
            done += span
        joined[np.cumsum(sizes) - 1] = _NEWLINE
        return joined


def split_columns(data: bytes, wanted: Sequence[int], fields: int, *, more: bool) -> Columns | None:
    """The fields `wanted` (0-based) of every line of `data`, each line holding exactly `fields`
    fields (or at least that many when `more`); None unless `data` is a usual file."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8) :]
    if not data or not _usual(data):
        return None  # empty, or a byte the usual file does not hold
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n")
        if b"\r" in data:  # a lone CR ends a line when read as text: leave it to the line reader
            return None
    text = np.frombuffer(data, dtype=np.uint8)
    index = np.int32 if len(text) < 2**31 else np.int64  # offsets: half the memory for the usual file
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    low = 0
    step = _BYTES  # a block of whole lines
    while low < len(text):
        high = min(low + step, len(text))
        if high < len(text):  # end the block after a line end
            newline = data.find(b"\n", high - 1)
            high = len(text) if newline < 0 else newline + 1
        block = _split_block(text[low:high], wanted, fields, more)
        if block is None:
            return None
        starts.append((block[0] + low).astype(index))
        ends.append((block[1] + low).astype(index))
        low = high
    return Columns(text, np.concatenate(starts), np.concatenate(ends))


def _usual(data: bytes) -> bool:
    """Whether `data` holds only the usual bytes. Deleted a block at a time: bytes.translate
    allocates a result as long as its input before it shrinks it (a regex search is ~10x slower)."""
    return not any(
        data[low : low + _CHECKED].translate(None, _USUAL) for low in range(0, len(data), _CHECKED)
    )


def _split_block(
    text: np.ndarray, wanted: Sequence[int], fields: int, more: bool
) -> tuple[np.ndarray, np.ndarray] | None:
    """Offsets in `text` (whole lines) of the wanted fields of its lines, or None."""
    separator = text <= 0x20  # space, tab, LF: nothing else at or below 0x20 is left
    # Fields begin and end where the text changes between separators and the rest: counting a
    # separator before and after the text, the changes alternate begin, end, begin, ...
    changes = np.flatnonzero(separator[1:] != separator[:-1]) + 1
    if not separator[0]:
        changes = np.concatenate(([0], changes))
    if not separator[-1]:
        changes = np.concatenate((changes, [len(text)]))
    del separator
    field_starts, field_ends = changes[0::2], changes[1::2]
    line_ends = np.flatnonzero(text == _NEWLINE)
    lines = len(line_ends) + (len(text) > 0 and text[-1] != _NEWLINE)
    if len(field_starts) == fields * lines:
        # As many fields as `fields` a line: every line has exactly that many when each line's
        # last field ends before its line end and the next line's first field starts after it.
        last_ends = field_ends[fields - 1 :: fields]
        next_starts = field_starts[fields::fields]
        if (last_ends[: len(line_ends)] <= line_ends).all() and (next_starts > line_ends[: lines - 1]).all():
            picked = np.arange(0, fields * lines, fields)[:, None] + np.asarray(wanted, dtype=np.int64)
            return field_starts[picked], field_ends[picked]
        if not more:
            return None
    elif not more:
        return None
    # A line with more fields than `fields` (a run's tag may be followed by more), or a blank line.
    line_starts = np.concatenate(([0], line_ends[line_ends < len(text) - 1] + 1))
    first = np.searchsorted(field_starts, line_starts)  # each line's first field
    counts = np.diff(first, append=len(field_starts))
    if (counts < fields).any():
        return None  # a blank line, or one with too few fields
    picked = first[:, None] + np.asarray(wanted, dtype=np.int64)
    return field_starts[picked], field_ends[picked]
