"""Pasted lists: `query_id: doc_id, doc_id, ...` per line, the list order being the ranking. Pure.

The run upload form's pasted text is in this format; `evaluate --run-format lists` reads such a file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import numpy as np

from evaluation.formats.builders import COMPARE, RunRules, run_name
from evaluation.formats.ids import check_id_chars, check_id_length
from evaluation.formats.problems import Problems
from evaluation.formats.sources import Source, text_lines, with_source
from evaluation.metrics.data import Run
from evaluation.metrics.policies import EvaluationError, gettext_noop

# Query ID, a colon, then document IDs in rank order. Full-width punctuation is accepted because
# Chinese keyboards produce it by default, the enumeration comma 、 too: Chinese lists are written
# with it ("文档甲、文档乙"), and read as one ID it would score 0 without a word.
_COMMA = re.compile(r"[,，、]")


# IDs in a pasted list are separated by any Unicode space (the full-width U+3000 too), but not by
# the characters no ID may hold, where str.split() also splits (NEL, U+2028, U+2029,
# U+001C-U+001F): an ID holding one is refused by name, not silently read as two IDs.
_ID_SPACE = re.compile(r"[^\S\x1c-\x1f\x85\u2028\u2029]+")


# The same spaces for stripping: str.strip() would also drop those characters at an ID's ends,
# storing "B" for "B<U+2028>" without a word. Every Unicode space lies below U+3001.
_SPACES = "".join(c for c in map(chr, range(0x3001)) if _ID_SPACE.fullmatch(c))


def parse_ranked_lists(text: str, *, source: str, name: str) -> Run:
    """`qid: id1, id2, ...` per line -> a rank-only run; the list order is the ranking.

    Blank lines and lines starting with # are skipped. IDs are separated by commas and/or
    spaces. A query listed twice or a document listed twice for one query is refused. A query
    with no IDs ("q3:") is left out of the run: it is missing from it, as in any run file.
    """
    query_ids: list[str] = []
    docs: list[str] = []
    lines: list[int] = []
    offsets = [0]
    first_line: dict[str, int] = {}
    for number, raw_line in enumerate(text_lines(text), start=1):
        line = raw_line.strip(_SPACES)
        if not line or line.startswith("#"):
            continue
        # The query ends at the first ": " (so "http://x: a, b" names query "http://x"), else at the
        # first colon, half- or full-width ("q1:a,b", "问题一：甲，乙").
        head, colon, tail = line.partition(": ")
        if not colon:
            head, colon, tail = line.partition(":")
        if not colon:
            head, colon, tail = line.partition("：")
        if not colon:
            raise EvaluationError(
                gettext_noop("expected 'query_id: doc_id, doc_id, ...' but found no colon in %(line)r"),
                {"line": line[:80]},
                source=source,
                line=number,
            )
        query = head.strip(_SPACES)
        if not query:
            raise EvaluationError(
                gettext_noop("the query ID before the colon is empty"), source=source, line=number
            )
        if query in first_line:
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r is listed twice (lines %(first)s and %(second)s); give each query one "
                    "line"
                ),
                {"query": query, "first": first_line[query], "second": number},
                query=query,
                source=source,
                line=number,
            )
        first_line[query] = number
        # Commas separate entries (spaces too); an empty entry between two commas is most likely
        # a lost ID, so it is refused rather than closing the gap. One trailing comma is fine.
        entries = [piece.strip(_SPACES) for piece in _COMMA.split(tail.strip(_SPACES))]
        if entries and not entries[-1] and len(entries) > 1:
            entries.pop()
        if any(not entry for entry in entries) and tail.strip(_SPACES):
            raise EvaluationError(
                gettext_noop(
                    "query %(query)r: an empty entry between two commas (entry %(position)s); remove the "
                    "extra comma or add the missing ID"
                ),
                {"query": query, "position": entries.index("") + 1},
                query=query,
                source=source,
                line=number,
            )
        ranking = [doc for entry in entries for doc in _ID_SPACE.split(entry) if doc]
        seen: dict[str, int] = {}
        for position, doc in enumerate(ranking, start=1):
            if doc in seen:
                raise EvaluationError(
                    gettext_noop(
                        "query %(query)r: document %(doc)r appears twice in the ranking (positions %(first)s "
                        "and %(second)s)"
                    ),
                    {"query": query, "doc": doc, "first": seen[doc], "second": position},
                    query=query,
                    doc_id=doc,
                    source=source,
                    line=number,
                )
            seen[doc] = position
        if not ranking:
            # "q3:" with no IDs: the system returned nothing for q3. No run file format can say
            # that apart from leaving the query out (a TREC, CSV or JSONL run has lines per
            # document), so it counts as a query the run did not answer, as in the copy `evaluate`
            # reads from the comparison's export, which then reproduces its counts.
            continue
        query_ids.append(query)
        docs.extend(ranking)
        lines.extend([number] * len(ranking))
        offsets.append(len(docs))
    return Run(
        query_ids,
        docs,
        np.asarray(offsets, dtype=np.int64),
        lines=np.asarray(lines, dtype=np.int64),
        name=name,
        source=source,
    )


def read_lists_run(
    source: Source, *, name: str | None = None, rules: RunRules = COMPARE, collect: int | None = None
) -> Run:
    """A file of pasted lists as a rank-only run; its name defaults to the file name. A list has
    neither gaps nor missing ranks, so of `rules` only `stored_ids` applies. Pasted text is read to its first
    problem: `collect` only makes it an EvaluationErrors, as the other readers raise."""
    system = run_name(source, name)
    problems = Problems(collect)

    def read(open_lines: Callable[[], Iterator[str]], label: str) -> Run:
        run = parse_ranked_lists("".join(open_lines()), source=label, name=system)
        # The readers' one ID rule (the upload form applies its own, worded for the page).
        for query in run.query_ids:
            lines = run.lines_of(query)
            assert lines is not None  # parse_ranked_lists keeps every document's line
            check_id_chars(query, source=label, line=lines[0])
            if rules.stored_ids:
                check_id_length(query, source=label, line=lines[0])
            for doc, line in zip(run.ranking(query), lines, strict=True):
                check_id_chars(doc, source=label, line=line, query=query)
                if rules.stored_ids:
                    check_id_length(doc, source=label, line=line, query=query)
        return run

    return problems.reading(lambda: with_source(source, read))
