"""How the batch engine finds the grade of a ranked document: IDs as 64-bit words, a hash table.

Dict lookups of Python strings wait on memory for every string. Words compared in full give byte
equality within the query, never a hash coincidence; what they cannot settle goes to the caller's
dicts (ASK), so the grades never depend on this module, only the time does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

WORD = 8  # bytes in a word
MAX_WORDS = 8  # IDs over 64 UTF-8 bytes are looked up by string
# The width is the narrowest that holds all but at most 1 in SLOW_SHARE of the IDs.
SLOW_SHARE = 256
PROBES = 12  # slots read per ID before it is left to the dicts (the rounds after the first are on few IDs)

NOT_IN_POOL = -1
ASK = -3
_GO_ON = -4

IdWords = np.ndarray  # (IDs, width) uint64, C order: row i holds ID i's bytes, 8 to a word

_U64 = np.uint64
# Multiplicative hashing: each word times its own odd constant, summed; the top bits pick the
# slot. Zero words add nothing, so an ID hashes alike whatever width holds it.
_MULTIPLIERS = np.array(
    [(0x9E3779B97F4A7C15 * (2 * j + 1)) % (1 << 64) for j in range(MAX_WORDS)], dtype=_U64
)
# The masks keeping a word's first 0..8 bytes.
_BYTE_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(WORD)] + [(1 << 64) - 1], dtype=_U64)
# The first word of an ID too long for the width: a zero first byte then a one, which the words of
# no ID have (an ID is not empty and holds no NUL). It equals no slot's words, so such a row is
# never answered from the table; `grades` marks it ASK.
TOO_LONG = _U64(1 << 56)
_GRADE = _U64(3)  # the grade's bits in a slot's first column
_END = "\x00" * WORD  # after the last ID of a block
_PACKED = 1 << 31  # homes and entries below this are sorted as one uint64 key each
_FEW = 32  # IDs left to probe that are looked up in the dicts instead
_BLOCK = 4096  # IDs encoded at a time: small blocks keep the text from being held twice over


def encode_ids(ids: Sequence[str]) -> IdWords | None:
    """The words of `ids` (see the module docstring), or None when an ID holds NUL.

    The words take ~the IDs' UTF-8 size, rounded up to 8 bytes an ID. IDs are encoded a block at a
    time, straight into the words, so that their text is never held twice over (a run's upload is
    held to 4 times its file's size).
    """
    writer = WordsWriter(len(ids))
    for low in range(0, len(ids), _BLOCK):
        block = _encode_block(ids[low : low + _BLOCK])
        if block is None:
            return None
        writer.write(low, *block)
    return writer.words()


class WordsWriter:
    """The words of n IDs, written a block of IDs at a time from bytes that hold them (a file
    reader writes them from the file's own bytes, without making the IDs' strings first)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self._words: np.ndarray | None = None
        self._needed = np.zeros(MAX_WORDS + 2, dtype=np.int64)  # IDs needing 0, 1, ... words (last: more)

    def write(self, low: int, data: bytes | np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> None:
        """IDs low, low + 1, ...: ID low + i is data[starts[i]:starts[i] + lengths[i]], and data
        goes on for WORD - 1 bytes after every ID (words are read whole; what follows an ID is
        masked off). `starts` and `lengths` (int32 or int64) are consumed."""
        n = self.n
        counts = np.bincount(
            np.minimum((lengths + (WORD - 1)) // WORD, MAX_WORDS + 1), minlength=MAX_WORDS + 2
        )
        self._needed += counts
        width = min(int(np.flatnonzero(counts)[-1]), MAX_WORDS) if len(starts) else 1
        words = self._words
        if words is None:  # as wide as the first block needs
            words = self._words = np.zeros((n, max(width, 1)), dtype=_U64)
        elif width > words.shape[1]:  # rare: longer IDs than so far (one copy of the words)
            words = self._words = np.concatenate(
                (words, np.zeros((n, width - words.shape[1]), dtype=_U64)), axis=1
            )
        rows = words[low : low + len(starts)]
        # Eight bytes at any offset, read as one little-endian word.
        size = len(data) if isinstance(data, bytes) else data.nbytes
        unaligned = np.ndarray(shape=(size - WORD + 1,), dtype="<u8", buffer=data, strides=(1,))
        end = size - WORD
        for j in range(width):
            if j:  # word j of each ID; an ID that ended before it reads no further (masked off)
                lengths -= WORD
                np.minimum(starts + WORD, end, out=starts)
            np.bitwise_and(unaligned[starts], _BYTE_MASKS[np.clip(lengths, 0, WORD)], out=rows[:, j])
        rows[lengths > WORD, 0] = TOO_LONG  # what is left of each ID past the words: too long

    def words(self) -> IdWords:
        words = self._words
        if words is None:
            return np.zeros((0, 1), dtype=_U64)
        n = self.n
        # The narrowest width holding all but 1 in SLOW_SHARE of the IDs; the rest are too long.
        width = min(max(int(np.argmax(np.cumsum(self._needed) >= n - n // SLOW_SHARE)), 1), MAX_WORDS)
        if width < words.shape[1]:
            words[(words[:, width:] != 0).any(axis=1), 0] = TOO_LONG
            words = np.ascontiguousarray(words[:, :width])
        too_long = words[:, 0] == TOO_LONG
        if too_long.any():
            words[too_long, 1:] = 0
        return words


def _encode_block(ids: Sequence[str]) -> tuple[bytes, np.ndarray, np.ndarray] | None:
    """The UTF-8 of `ids` joined by NUL and ending in WORD zero bytes, each ID's start and its
    length in bytes; None when an ID holds NUL."""
    # One C-level join and encode. "surrogatepass" keeps the encoding one-to-one for strings
    # holding lone surrogates, which strict UTF-8 refuses.
    data = ("\x00".join(ids) + _END).encode("utf-8", "surrogatepass")
    separators = np.flatnonzero(np.frombuffer(data, dtype=np.uint8, count=len(data) - WORD) == 0)
    if len(separators) != len(ids) - 1:  # an ID holds NUL
        return None
    starts = np.empty(len(ids), dtype=np.int32)
    starts[0] = 0
    starts[1:] = separators + 1
    lengths = np.empty(len(ids), dtype=np.int32)
    lengths[:-1] = separators
    lengths[-1] = len(data) - WORD
    lengths -= starts
    return data, starts, lengths


def _hash(words: np.ndarray) -> np.ndarray:
    h = words[:, 0] * _MULTIPLIERS[0]
    for j in range(1, words.shape[1]):
        h += words[:, j] * _MULTIPLIERS[j]
    return h


@dataclass(frozen=True, eq=False)
class IdTable:
    """A pool's document IDs that fit in words, each with its grade, in slots per query.

    Query q's IDs have the home slots base[q] .. base[q] + 2**(64 - shift[q]) - 1, at least
    twice as many as its IDs (so the table is at most half full). One row per slot:
    [query * 4 + grade, word 0, word 1, ...]; an empty slot has first word 0, which no ID has.
    The query is in the slot because a query's last IDs may spill into the next query's slots,
    and one document is often judged for several queries.
    """

    base: np.ndarray  # (queries,) int64
    shift: np.ndarray  # (queries,) uint64
    slots: np.ndarray  # (slots, 1 + width) uint64

    @classmethod
    def build(cls, words: IdWords, per_query: np.ndarray, grades: np.ndarray) -> IdTable:
        """From the words of every judged ID, query after query (`per_query[q]` IDs for query q),
        and their grades."""
        n_queries = len(per_query)
        query_of = np.repeat(np.arange(n_queries), per_query)
        kept = np.flatnonzero(words[:, 0] != TOO_LONG)  # the others are looked up by string
        query_of = query_of[kept]
        bits = np.zeros(n_queries, dtype=np.int64)
        fitting = np.bincount(query_of, minlength=n_queries)
        np.ceil(np.log2(2 * fitting, where=fitting > 0, out=np.zeros(n_queries)), out=bits, casting="unsafe")
        homes = np.left_shift(1, bits)
        base = np.zeros(n_queries, dtype=np.int64)
        np.cumsum(homes[:-1], out=base[1:])
        shift = (64 - bits).astype(_U64)
        mine = words[kept]
        home = base[query_of] + (_hash(mine) >> shift[query_of]).astype(np.int64)
        # Linear probing without a loop: entries in the order of their home slots (one sort of
        # (home, entry) keys), each at its home or just past the entry before it. Every slot from
        # an entry's home to its own is then taken, as a probe that stops at an empty slot needs.
        # A query's last entries may spill into the next query's slots: probes walk past them.
        n = len(kept)
        if n < _PACKED and int(homes.sum()) < _PACKED:  # (home, entry) fits one word: numpy sorts those fast
            keys = (home.astype(_U64) << _U64(32)) | np.arange(n, dtype=_U64)
            order = (np.sort(keys) & _U64(0xFFFFFFFF)).astype(np.intp)
        else:
            order = np.argsort(home, kind="stable")
        steps = np.arange(n, dtype=np.int64)
        position = np.maximum.accumulate(home[order] - steps) + steps
        total = max(int(homes.sum()), int(position[-1]) + 1 if n else 0)
        columns = 1 + words.shape[1]
        slots = np.zeros((total + PROBES, columns), dtype=_U64)
        flat = slots.reshape(-1)  # one-dimensional scatters: numpy's fast path
        position *= columns
        flat[position] = query_of[order] * 4 + grades[kept[order]]
        for j in range(words.shape[1]):
            position += 1
            flat[position] = mine[order, j]
        return cls(base=base, shift=shift, slots=slots)

    def grades(self, words: IdWords, rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
        """The grade of the ID in row `rows[i]` of `words` for pool query `queries[i]` (an
        int64 array): 0..3, NOT_IN_POOL, or ASK when the words cannot settle it."""
        width = self.slots.shape[1] - 1
        mine = np.take(words, rows, axis=0)
        beyond = None
        if mine.shape[1] > width:  # longer than every ID the table holds: ask the dicts
            beyond = (mine[:, width:] != 0).any(axis=1)
            mine = mine[:, :width]
        elif mine.shape[1] < width:
            mine = np.concatenate((mine, np.zeros((len(mine), width - mine.shape[1]), dtype=_U64)), axis=1)
        slot = np.take(self.base, queries) + (_hash(mine) >> np.take(self.shift, queries)).astype(np.int64)
        want = queries.astype(_U64) << _U64(2)
        result = _probe(np.take(self.slots, slot, axis=0), mine, want)
        pending = np.flatnonzero(result == _GO_ON)
        for probe in range(1, PROBES):
            if len(pending) <= _FEW:  # a round costs more than the dicts' lookups of so few
                break
            found = _probe(np.take(self.slots, slot[pending] + probe, axis=0), mine[pending], want[pending])
            result[pending] = found
            pending = pending[found == _GO_ON]
        result[pending] = ASK
        too_long = mine[:, 0] == TOO_LONG
        if beyond is not None:
            too_long |= beyond
        result[too_long] = ASK
        return result


def _probe(slots: np.ndarray, mine: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The same words and query: the same judgment, so its grade; an empty slot: not there."""
    same = slots[:, 1] == mine[:, 0] if mine.shape[1] == 1 else (slots[:, 1:] == mine).all(axis=1)
    entry = slots[:, 0] ^ want  # the grade when the slot is of this query, else 4 or more
    same &= entry <= _GRADE
    return np.where(same, entry.astype(np.int64), np.where(slots[:, 1] == 0, NOT_IN_POOL, _GO_ON))
