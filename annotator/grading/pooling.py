"""Pooling: the union of each run's top k documents per query, from run files read by the engine's
one run reader (`evaluation.formats.read_run(..., purpose="pooling")`), so one run file serves both
pooling and comparing. What pooling alone accepts is named there (rank gaps, file order).
"""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass, field

from annotator.documents.readers import MAX_ERRORS, ImportFileError, LineError, decode_upload
from annotator.web.errors import describe_error
from evaluation import formats
from evaluation.formats.registry import FORMATS

PROVENANCE_MAX_LENGTH = 500  # Candidate.source_detail


@dataclass(slots=True)  # one per pooled pair: an upload may pool every line of its runs
class PooledPair:
    """A (query, document) pair in the union of the runs' top-k, with every run that put it there."""

    query_id: str
    doc_id: str
    hits: list[tuple[str, int]] = field(default_factory=list)  # (run name, 1-based position)
    line: int = 0
    source: str = ""  # the file it was first seen in

    def provenance(self, depth: int, limit: int = PROVENANCE_MAX_LENGTH) -> str:
        """e.g. "bm25 #3, dense #1 (k=10)": stored on the candidate, shown to owners only. Past
        `limit` characters the list ends in "… +N" (N runs not named) and keeps its "(k=…)",
        rather than being cut off mid-name."""
        end = f" (k={depth})"
        hits = [f"{run} #{position}" for run, position in self.hits]
        text = ", ".join(hits)
        shown = len(hits)
        # Drop names from the end until the list and its "… +N" fit.
        while len(text) + len(end) > limit:
            shown -= 1
            text = ", ".join([*hits[:shown], f"… +{len(hits) - shown}"])
        return text + end


def read_run(data: bytes | str, fmt: str, default_name: str) -> formats.Run:
    """One uploaded run file (TREC, CSV or JSONL) read for pooling, or ImportFileError listing its
    problems as the other imports do (up to MAX_ERRORS, each naming the line, the value and what is
    allowed). Named by its tag or `system` value, else `default_name`."""
    decode_upload(data)  # the uploads' rule: UTF-8, no NUL, a zip or gzip said to be one
    buffer = io.BytesIO(data if isinstance(data, bytes) else data.encode("utf-8"))
    buffer.name = default_name  # the reader's errors name it; the callers drop it for their own
    stream = io.TextIOWrapper(buffer, encoding="utf-8-sig", newline=FORMATS[fmt].newline)
    try:
        return formats.read_run(stream, format=fmt, name=default_name, purpose="pooling", collect=MAX_ERRORS)
    except formats.EvaluationErrors as found:
        raise ImportFileError([_line_error(error) for error in found.errors], found.more) from None
    except formats.EvaluationError as error:  # the format itself (detect_format)
        raise ImportFileError([_line_error(error)]) from None


def _line_error(error: formats.EvaluationError) -> LineError:
    # The caller names the file; the line leads, as in every other import's messages.
    problem = copy.copy(error)
    problem.source, problem.line = None, None
    return LineError(error.line or 1, "", "", describe_error(problem))


def ranked(run: formats.Run, query: str) -> list[tuple[str, float | None, int]]:
    """(document, score, line) of one query in pooling order: score descending with ties by
    document ID descending (trec_eval's order), else the run's own order (rank, or file order)."""
    docs = run.ranking(query)
    scores = run.scores_of(query)
    lines = run.lines_of(query) or (0,) * len(docs)
    if scores is None:
        return [(doc, None, line) for doc, line in zip(docs, lines, strict=True)]
    scored = [(doc, float(score), line) for doc, score, line in zip(docs, scores, lines, strict=True)]
    # Two stable sorts: by document descending, then by score descending.
    scored.sort(key=lambda row: row[0], reverse=True)
    scored.sort(key=lambda row: row[1], reverse=True)
    return list(scored)


def pool_top_k(runs: list[tuple[str, formats.Run]], depth: int | None) -> list[PooledPair]:
    """The union over runs (file name, run) of each run's top `depth` documents per query (every
    row if `depth` is None).

    A document whose score ties the k-th document's score is pooled too: whichever tie policy a
    later comparison declares, every document it may place in the top k has then been graded.
    Returns pairs in first-seen order, each with the (run, position) hits that pooled it.
    """
    # Found by query, then document: a (query, document) tuple for every pooled pair's key cost
    # more than the pair's line in the file.
    pooled: dict[str, dict[str, PooledPair]] = {}
    pairs: list[PooledPair] = []  # first-seen order
    for source, run in runs:
        hits: list[tuple[str, int]] = []  # the run's (name, position) hits, one tuple each for all queries
        for query_id in run.query_ids:
            found = pooled.setdefault(query_id, {})
            order = ranked(run, query_id)
            top = order
            if depth is not None and len(order) > depth:
                cut = depth
                boundary = order[depth - 1][1]
                while boundary is not None and cut < len(order) and order[cut][1] == boundary:
                    cut += 1
                top = order[:cut]
            while len(hits) < len(top):
                hits.append((run.name, len(hits) + 1))
            for position, (doc_id, _score, line) in enumerate(top):
                pair = found.get(doc_id)
                if pair is None:
                    pair = found[doc_id] = PooledPair(
                        query_id=query_id, doc_id=doc_id, hits=[hits[position]], line=line, source=source
                    )
                    pairs.append(pair)
                else:
                    pair.hits.append(hits[position])
    return pairs
