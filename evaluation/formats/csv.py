"""CSV judgments and runs: a header row, columns by name (others ignored). Pure.

A run with both a score and a rank is ordered by its scores, as trec_eval orders a TREC run, and
one file holds one run. The layouts are in evaluation/README.md.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator

from evaluation.formats.builders import (
    COMPARE,
    ORDER_ONLY_COLUMNS,
    QrelsBuilder,
    RunBuilder,
    RunRules,
    run_name,
)
from evaluation.formats.ids import check_doc_id, check_query_id, spreadsheet_safe
from evaluation.formats.problems import Problems
from evaluation.formats.rows import csv_table
from evaluation.formats.sources import Source, open_target, with_source
from evaluation.formats.values import GradeReader, parse_rank, parse_score, rank_if_valid
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.policies import EvaluationError, gettext_noop

QRELS_COLUMNS = ("query_id", "doc_id", "grade")
RUN_COLUMNS = ("query_id", "doc_id", "rank", "score", "system")


def read_csv_qrels(source: Source, *, grade_map: dict[int, int] | None = None) -> Pool:
    def read(open_lines: Callable[[], Iterator[str]], name: str) -> Pool:
        columns, rows = csv_table(open_lines(), name, QRELS_COLUMNS)
        q, d, g = (columns[c] for c in QRELS_COLUMNS)
        grades = GradeReader(grade_map, name)
        builder = QrelsBuilder(name)
        for line, row in rows:
            query = check_query_id(row[q], source=name, line=line)
            doc = check_doc_id(row[d], source=name, line=line, query=query)
            builder.add(query, doc, grades.from_token(row[g].strip(), query, doc, line), line)
        return builder.pool()

    return with_source(source, read, newline="")


def read_csv_run(
    source: Source, *, name: str | None = None, rules: RunRules = COMPARE, collect: int | None = None
) -> Run:
    """`collect`: gather up to that many problems (a refused row is skipped) and raise them as one
    EvaluationErrors, instead of the first (problems.py)."""
    system = run_name(source, name)
    one_of = () if rules.order_only else ("score", "rank")
    problems = Problems(collect)

    def read(open_lines: Callable[[], Iterator[str]], label: str) -> Run:
        columns, rows = csv_table(
            open_lines(), label, ("query_id", "doc_id"), one_of=one_of, problems=problems
        )
        q, d = columns["query_id"], columns["doc_id"]
        score_at, rank_at, system_at = columns.get("score"), columns.get("rank"), columns.get("system")
        if score_at is None and rank_at is None:
            _check_order_only(columns, label)
        builder = RunBuilder(label, rules, problems)

        def add(line: int, row: list[str]) -> None:
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
            elif rank_at is not None:
                builder.add(
                    query,
                    doc,
                    None,
                    parse_rank(row[rank_at].strip(), query, doc, source=label, line=line),
                    line,
                )
            else:
                builder.add(query, doc, None, None, line)

        for line, row in rows:
            try:
                add(line, row)
            except EvaluationError as error:
                problems.add(error)  # raises it again unless collecting
        return builder.run(system)

    return problems.reading(lambda: with_source(source, read, newline=""))


def _check_order_only(columns: dict[str, int], name: str) -> None:
    other = next((column for column in columns if column not in ORDER_ONLY_COLUMNS), None)
    if other is None:
        return
    raise EvaluationError(
        gettext_noop(
            "the header names neither score nor rank, and %(column)r, which is not a run column; rows are "
            "read in file order only under a header of %(columns)s"
        ),
        {"column": other, "columns": ",".join(ORDER_ONLY_COLUMNS)},
        source=name,
        line=1,
    )


def write_csv_qrels(target: Source, pool: Pool, *, spreadsheet: bool = False) -> None:
    """`spreadsheet`: IDs a spreadsheet would run as formulas are written prefixed with "'"
    (ids.spreadsheet_safe): a file to open, no longer the IDs the pool hash is computed over."""
    cell = spreadsheet_safe if spreadsheet else str
    stream, owned = open_target(target, newline="")
    try:
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(QRELS_COLUMNS)
        for query in pool:
            shown = cell(query)
            writer.writerows((shown, cell(doc), grade) for doc, grade in pool[query].items())
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
