"""JSONL judgments and runs: one JSON object per line, keys as the CSV columns. Pure.

A run with both a score and a rank is ordered by its scores, as trec_eval orders a TREC run, and
one file holds one run. The layouts are in evaluation/README.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from typing import Any

from evaluation.formats.builders import (
    COMPARE,
    ORDER_ONLY_COLUMNS,
    QrelsBuilder,
    RunBuilder,
    RunRules,
    run_name,
)
from evaluation.formats.ids import check_doc_id, check_query_id
from evaluation.formats.problems import Problems
from evaluation.formats.rows import json_objects
from evaluation.formats.sources import Source, open_target, with_source
from evaluation.formats.values import SCORE_UNDERFLOW, GradeReader, as_json, as_written, underflows
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import EvaluationError, gettext_noop, is_integer


def _key(record: dict[str, Any], key: str, name: str, line: int) -> Any:
    if key not in record:
        raise EvaluationError(
            gettext_noop("the object has no %(key)r key"),  # the line number finds the object
            {"key": key},
            source=name,
            line=line,
        )
    return record[key]


def read_jsonl_qrels(source: Source, *, grade_map: dict[int, int] | None = None) -> Pool:
    def read(open_lines: Callable[[], Iterator[str]], name: str) -> Pool:
        grades = GradeReader(grade_map, name)
        builder = QrelsBuilder(name)
        for line, record, _text in json_objects(open_lines(), name):
            query = check_query_id(_key(record, "query_id", name, line), source=name, line=line)
            doc = check_doc_id(_key(record, "doc_id", name, line), source=name, line=line, query=query)
            builder.add(
                query, doc, grades.from_value(_key(record, "grade", name, line), query, doc, line), line
            )
        return builder.pool()

    return with_source(source, read)


def read_jsonl_run(
    source: Source, *, name: str | None = None, rules: RunRules = COMPARE, collect: int | None = None
) -> Run:
    """`collect`: gather up to that many problems (a refused line is skipped) and raise them as one
    EvaluationErrors, instead of the first (problems.py)."""
    system = run_name(source, name)
    problems = Problems(collect)

    def read(open_lines: Callable[[], Iterator[str]], label: str) -> Run:
        builder = RunBuilder(label, rules, problems)

        def add(line: int, record: dict[str, Any], text: str) -> None:
            query = check_query_id(_key(record, "query_id", label, line), source=label, line=line)
            doc = check_doc_id(_key(record, "doc_id", label, line), source=label, line=line, query=query)
            builder.system(record.get("system"), line)
            if "score" in record:
                score = record["score"]
                if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
                    raise EvaluationError(
                        gettext_noop(
                            "query %(query)r, document %(doc)r: score must be a finite number, got %(score)s"
                        ),
                        {"query": query, "doc": doc, "score": as_json(as_written(text, "score", score))},
                        query=query,
                        doc_id=doc,
                        source=label,
                        line=line,
                    )
                # Only a 0.0 can be an underflow: the line is parsed again for those alone.
                if score == 0.0 and underflows(str(written := as_written(text, "score", score)), score):
                    raise EvaluationError(
                        SCORE_UNDERFLOW,
                        {"query": query, "doc": doc, "token": as_json(written)},  # cut when long
                        query=query,
                        doc_id=doc,
                        source=label,
                        line=line,
                    )
                # The rank orders nothing here; it is kept only to warn when it disagrees.
                given: Any = record.get("rank")
                rank = int(given) if is_integer(given) and given >= 1 else None
                builder.add(query, doc, float(score), rank, line)
            elif "rank" in record:
                rank = record["rank"]
                if not is_integer(rank) or rank < 1:
                    raise EvaluationError(
                        gettext_noop(
                            "query %(query)r, document %(doc)r: rank must be a positive integer, got %(rank)s"
                        ),
                        {"query": query, "doc": doc, "rank": as_json(as_written(text, "rank", rank))},
                        query=query,
                        doc_id=doc,
                        source=label,
                        line=line,
                    )
                builder.add(query, doc, None, int(rank), line)
            elif rules.order_only and all(key in ORDER_ONLY_COLUMNS for key in record):
                builder.add(query, doc, None, None, line)
            elif rules.order_only:
                # As in CSV: another key may be a misspelt "rank", which file order would ignore.
                other = next(key for key in record if key not in ORDER_ONLY_COLUMNS)
                raise EvaluationError(
                    gettext_noop(
                        "query %(query)r, document %(doc)r: the object has neither 'score' nor 'rank', and "
                        "%(key)r, which is not a run key; objects are read in file order only with the "
                        "keys %(keys)s"
                    ),
                    {"query": query, "doc": doc, "key": other, "keys": ", ".join(ORDER_ONLY_COLUMNS)},
                    query=query,
                    doc_id=doc,
                    source=label,
                    line=line,
                )
            else:
                raise EvaluationError(
                    gettext_noop(
                        "query %(query)r, document %(doc)r: the object has neither 'score' nor 'rank'"
                    ),
                    {"query": query, "doc": doc},
                    query=query,
                    doc_id=doc,
                    source=label,
                    line=line,
                )

        for line, record, text in json_objects(open_lines(), label, problems):
            try:
                add(line, record, text)
            except EvaluationError as error:
                problems.add(error)  # raises it again unless collecting
        return builder.run(system)

    return problems.reading(lambda: with_source(source, read))


def write_jsonl_qrels(target: Source, pool: Pool) -> None:
    stream, owned = open_target(target)
    try:
        for query in pool:
            stream.writelines(
                json.dumps({"query_id": query, "doc_id": doc, "grade": grade}, ensure_ascii=False) + "\n"
                for doc, grade in pool[query].items()
            )
    finally:
        if owned:
            stream.close()


def write_jsonl_run(target: Source, run: Run) -> None:
    stream, owned = open_target(target)
    try:
        for query in run.query_ids:
            docs = run.ranking(query)
            scores = run.scores_of(query)
            for rank, doc in enumerate(docs, start=1):
                record: dict[str, Any] = {"query_id": query, "doc_id": doc, "rank": rank}
                if scores is not None:
                    record["score"] = scores[rank - 1]
                record["system"] = run.name
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
    finally:
        if owned:
            stream.close()
