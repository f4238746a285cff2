"""CSV and JSONL equivalents of the TREC files: the same judgments and runs, columns by name.

A run with both a score and a rank is ordered by its scores, as trec_eval orders a TREC run, and
one file holds one run. The layouts are in evaluation/README.md.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from evaluation.formats.common import (
    MAX_DIGITS,
    SCORE_UNDERFLOW,
    GradeReader,
    QrelsBuilder,
    RunBuilder,
    Source,
    as_json,
    as_written,
    check_doc_id,
    check_query_id,
    open_target,
    parse_rank,
    parse_score,
    rank_if_valid,
    run_name,
    underflows,
    with_source,
)
from evaluation.formats.rows import (
    CSV_FIELD_LIMIT,
    JSON_LINE_PROBLEMS,
    JSON_SYNTAX_PROBLEM,
    CSVSyntaxError,
    JSONProblem,
    csv_records,
    json_records,
)
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import EvaluationError, gettext_noop, is_integer

QRELS_COLUMNS = ("query_id", "doc_id", "grade")
RUN_COLUMNS = ("query_id", "doc_id", "rank", "score", "system")


def _csv_rows(
    lines: Iterator[str], name: str, required: tuple[str, ...], one_of: tuple[str, ...] = ()
) -> tuple[dict[str, int], Iterator[tuple[int, list[str]]]]:
    """(column -> index, rows) of a CSV with a header holding `required` and one of `one_of`."""
    records = csv_records(lines)
    try:
        _start, header_end, header = next(records)
    except StopIteration:
        raise EvaluationError(
            gettext_noop("the file is empty; expected a header %(header)s"),
            {"header": ",".join(required)},
            source=name,
        ) from None
    except CSVSyntaxError as error:
        raise _malformed(error, name, error.reached) from None
    columns = {column.strip(): i for i, column in enumerate(header)}
    if len(columns) != len(header):  # else the last copy wins silently: grade,grade reads the second
        twice = next(column for column, n in Counter(c.strip() for c in header).items() if n > 1)
        raise EvaluationError(
            gettext_noop("the header %(header)r names the column %(column)r twice; keep one"),
            {"header": ",".join(header), "column": twice},
            source=name,
            line=header_end,
        )
    missing = [column for column in required if column not in columns]
    # "score|rank": one of them; written with symbols, so the sentence around it can be translated.
    alternatives = "|".join(one_of)
    if one_of and not any(column in columns for column in one_of):
        missing.append(alternatives)  # named together, so one correction fixes the header
    if missing:
        raise EvaluationError(
            gettext_noop("the header %(header)r lacks %(missing)s; expected columns %(required)s"),
            {
                "header": ",".join(header),  # as written in the file, not as a Python list
                "missing": ", ".join(missing),
                "required": ",".join([*required, alternatives] if one_of else required),
            },
            source=name,
            line=header_end,
        )

    def rows() -> Iterator[tuple[int, list[str]]]:
        try:
            # A record is named by the line it starts on, not the last line of a multi-line record.
            for start, _end, row in records:
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) != len(header):
                    raise EvaluationError(
                        gettext_noop(
                            "expected %(expected)s columns like the header, found %(found)s: %(row)r"
                        ),
                        {"expected": len(header), "found": len(row), "row": row},
                        source=name,
                        line=start,
                    )
                yield start, row
        except CSVSyntaxError as error:
            raise _malformed(error, name, error.line) from None

    return columns, rows()


def _malformed(error: CSVSyntaxError, name: str, line: int) -> EvaluationError:
    if error.kind == "unclosed":
        return EvaluationError(
            gettext_noop(
                "a quote opened on this line is never closed (the file ends inside the quoted field)"
            ),
            source=name,
            line=line,
        )
    if error.kind == "too long":
        return EvaluationError(
            gettext_noop(
                "a field on this line is longer than %(limit)s characters, the most a field may hold"
            ),
            {"limit": f"{CSV_FIELD_LIMIT:,}"},
            source=name,
            line=line,
        )
    return EvaluationError(
        gettext_noop("malformed CSV: %(error)s"), {"error": error.detail}, source=name, line=line
    )


def read_csv_qrels(source: Source, *, grade_map: dict[int, int] | None = None) -> Pool:
    def read(open_lines: Callable[[], Iterator[str]], name: str) -> Pool:
        columns, rows = _csv_rows(open_lines(), name, QRELS_COLUMNS)
        q, d, g = (columns[c] for c in QRELS_COLUMNS)
        grades = GradeReader(grade_map, name)
        builder = QrelsBuilder(name)
        for line, row in rows:
            query = check_query_id(row[q], source=name, line=line)
            doc = check_doc_id(row[d], source=name, line=line, query=query)
            builder.add(query, doc, grades.from_token(row[g].strip(), query, doc, line), line)
        return builder.pool()

    return with_source(source, read, newline="")


def read_csv_run(source: Source, *, name: str | None = None) -> Run:
    system = run_name(source, name)

    def read(open_lines: Callable[[], Iterator[str]], label: str) -> Run:
        columns, rows = _csv_rows(open_lines(), label, ("query_id", "doc_id"), one_of=("score", "rank"))
        q, d = columns["query_id"], columns["doc_id"]
        score_at, rank_at, system_at = columns.get("score"), columns.get("rank"), columns.get("system")
        builder = RunBuilder(label)
        for line, row in rows:
            query = check_query_id(row[q], source=label, line=line)
            doc = check_doc_id(row[d], source=label, line=line, query=query)
            if system_at is not None:
                builder.system(row[system_at], line)
            if score_at is not None:
                token = row[score_at].strip()
                if not token:
                    # Scores order the run and the rank column is then ignored (as trec_eval
                    # ignores it), so an empty score is refused; say what the file could mean instead.
                    if rank_at is not None:
                        empty = gettext_noop(
                            "query %(query)r, document %(doc)r: the score is empty; give every row a score, "
                            "or leave the score column out to order the run by its rank column"
                        )
                    else:
                        empty = gettext_noop(
                            "query %(query)r, document %(doc)r: the score is empty; give every row a score, "
                            "or order the run with a rank column instead"
                        )
                    raise EvaluationError(
                        empty,
                        {"query": query, "doc": doc},
                        query=query,
                        doc_id=doc,
                        source=label,
                        line=line,
                    )
                score = parse_score(token, query, doc, source=label, line=line)
                # The rank orders nothing here; it is kept only to warn when it disagrees.
                rank = rank_if_valid(row[rank_at].strip()) if rank_at is not None else None
                builder.add(query, doc, score, rank, line)
            else:
                assert rank_at is not None
                builder.add(
                    query,
                    doc,
                    None,
                    parse_rank(row[rank_at].strip(), query, doc, source=label, line=line),
                    line,
                )
        return builder.run(system)

    return with_source(source, read, newline="")


def _json_objects(lines: Iterator[str], name: str) -> Iterator[tuple[int, dict[str, Any], str]]:
    """(line number, object, the line's text) per object line; the text serves error messages."""
    for number, line, record in json_records(lines):
        if isinstance(record, JSONProblem):
            raise _json_problem(record, name, number)
        yield number, record, line


def _json_problem(problem: JSONProblem, name: str, line: int) -> EvaluationError:
    if problem.kind == "syntax":
        return EvaluationError(JSON_SYNTAX_PROBLEM, {"column": problem.column}, source=name, line=line)
    if problem.kind == "duplicate":
        return EvaluationError(
            gettext_noop("the key %(key)r appears twice in this object"),
            {"key": problem.key},
            source=name,
            line=line,
        )
    if problem.kind == "not object":
        return EvaluationError(
            gettext_noop("expected a JSON object, found %(value)s"),
            {"value": as_json(problem.value)},
            source=name,
            line=line,
        )
    template = JSON_LINE_PROBLEMS[problem.kind]  # each marked where it is written
    return EvaluationError(template, {"digits": MAX_DIGITS}, source=name, line=line)


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
        for line, record, _text in _json_objects(open_lines(), name):
            query = check_query_id(_key(record, "query_id", name, line), source=name, line=line)
            doc = check_doc_id(_key(record, "doc_id", name, line), source=name, line=line, query=query)
            builder.add(
                query, doc, grades.from_value(_key(record, "grade", name, line), query, doc, line), line
            )
        return builder.pool()

    return with_source(source, read)


def read_jsonl_run(source: Source, *, name: str | None = None) -> Run:
    system = run_name(source, name)

    def read(open_lines: Callable[[], Iterator[str]], label: str) -> Run:
        builder = RunBuilder(label)
        for line, record, text in _json_objects(open_lines(), label):
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
        return builder.run(system)

    return with_source(source, read)


def write_csv_qrels(target: Source, pool: Pool) -> None:
    stream, owned = open_target(target, newline="")
    try:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(QRELS_COLUMNS)
        for query in pool:
            writer.writerows((query, doc, grade) for doc, grade in pool[query].items())
    finally:
        if owned:
            stream.close()


def write_csv_run(target: Source, run: Run) -> None:
    """Rows in the run's input order; rank = position in that order; no score column if rank-only."""
    stream, owned = open_target(target, newline="")
    try:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(RUN_COLUMNS if run.has_scores else ("query_id", "doc_id", "rank", "system"))
        for query in run.query_ids:
            docs = run.ranking(query)
            scores = run.scores_of(query)
            if scores is not None:
                writer.writerows(
                    (query, doc, rank, repr(score), run.name)
                    for rank, (doc, score) in enumerate(zip(docs, scores, strict=True), start=1)
                )
            else:
                writer.writerows((query, doc, rank, run.name) for rank, doc in enumerate(docs, start=1))
    finally:
        if owned:
            stream.close()


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
