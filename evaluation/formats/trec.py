"""TREC qrels and runs, read as trec_eval reads them (the rank column is not interpreted).

Up to three passes, each giving the next what it cannot take: columns with numpy (columns.py), a
lean line loop that gives up at the first surprise, and a careful pass that either names the
error or returns the same result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import numpy as np

from evaluation.formats.builders import COMPARE, QrelsBuilder, RunBuilder, RunRules, run_name
from evaluation.formats.columns import Columns, split_columns
from evaluation.formats.ids import MAX_ID_LENGTH, bad_id_chars
from evaluation.formats.problems import Problems
from evaluation.formats.sources import Source, open_target, replayable, usual_bytes, with_source
from evaluation.formats.values import GradeReader, parse_score, underflows
from evaluation.metrics.data import Pool, Run
from evaluation.metrics.lookup import TOO_LONG, IdWords
from evaluation.metrics.policies import EvaluationError, gettext_noop

# Fields are separated by C's whitespace (space, \t, \n, \r, \v, \f), as trec_eval's C parser
# reads them. str.split() also splits at Unicode spaces (NBSP, U+3000) and, even in ASCII text, at
# the information separators U+001C-U+001F: an ID holding one would become two fields and the rest
# of the line shift, a rank read as the score, with exit 0. Lines holding either are split here
# instead; the separators then stay in the ID, which the ID rule refuses by name.
_ASCII_SPACE = re.compile(r"[ \t\n\r\v\f]+")
_ASCII_STRIP = " \t\n\r\v\f"
_INFO_SEPARATOR = re.compile("[\x1c-\x1f]")
_INFO_SEPARATOR_BYTES = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")


def split_fields(line: str, maxsplit: int = -1) -> list[str]:
    """The whitespace-separated fields of a TREC line, split where trec_eval splits them."""
    if line.isascii() and not _INFO_SEPARATOR.search(line):
        return line.split(None, maxsplit)
    stripped = line.strip(_ASCII_STRIP)
    return _ASCII_SPACE.split(stripped, max(maxsplit, 0)) if stripped else []


def _splits_like_c(data: bytes | None, open_lines: Callable[[], Iterator[str]]) -> bool:
    """Whether str.split() on the text's ASCII lines splits where trec_eval does: no U+001C-U+001F
    anywhere. The fast passes split with str.split() (one check per line would cost them ~40%);
    the bytes the column pass read, when it could (`usual_bytes`), are searched at C speed (~10 ms
    for a million lines), other text line by line."""
    if data is not None:
        return not any(separator in data for separator in _INFO_SEPARATOR_BYTES)
    return not any(map(_INFO_SEPARATOR.search, open_lines()))


def read_trec_qrels(source: Source, *, grade_map: dict[int, int] | None = None) -> Pool:
    source = replayable(source)  # both passes read it

    def read(open_lines: Callable[[], Iterator[str]], name: str) -> Pool:
        grades = GradeReader(grade_map, name)
        data = usual_bytes(source)
        columns = None if data is None else split_columns(data, (0, 2, 3), 4, more=False)
        if columns is not None and (pool := _columns_qrels(columns, grades.tokens, name)) is not None:
            return pool
        like_c = _splits_like_c(data, open_lines)
        del data, columns
        fast = _fast_qrels(open_lines(), grades.tokens) if like_c else None
        if fast is not None:
            return Pool._trusted(fast, name)
        return _careful_qrels(open_lines(), grades, name)

    return with_source(source, read)


def _columns_qrels(columns: Columns, tokens: dict[str, int], name: str) -> Pool | None:
    """The pool of a usual qrels file (columns: query, document, grade), or None."""
    blocks = _query_blocks(columns)
    if blocks is None:
        return None
    block_queries, block_starts = blocks
    docs = columns.strings(1)
    # Grades: a one-character token by a table of bytes; longer ones ("10", "-1") by the dict.
    table = np.full(256, -1, dtype=np.int64)
    for token, grade in tokens.items():
        if len(token) == 1:
            table[ord(token)] = grade
    starts, ends = columns.starts[:, 2], columns.ends[:, 2]
    grades = table[columns.text[starts]]
    for line in np.flatnonzero(ends - starts != 1).tolist():
        grades[line] = tokens.get(columns.field(line, 2), -1)
    if (grades < 0).any():
        return None  # a grade token the fast path does not know: the careful pass says why
    values = grades.tolist()
    bounds = [*block_starts, columns.lines]
    pool: dict[str, dict[str, int]] = {}
    for query, low, high in zip(block_queries, bounds, bounds[1:], strict=False):
        found = pool.get(query)
        if found is None:
            pool[query] = dict(zip(docs[low:high], values[low:high], strict=True))
        else:  # the query's lines are in separate blocks
            found.update(zip(docs[low:high], values[low:high], strict=True))
    if sum(map(len, pool.values())) != columns.lines:  # some (query, document) was judged twice
        return None
    # The file is printable ASCII: no ID holds a character the ID rule refuses. The words are in
    # the pool's order when every query is one block.
    words = columns.words(1) if len(pool) == len(block_queries) else None
    return Pool._trusted(pool, name, id_words=words)


def _query_blocks(columns: Columns) -> tuple[list[str], list[int]] | None:
    """The query of each block of consecutive lines with one query (column 0), and the block's
    first line; None for a query ID too long to compare as words."""
    words = columns.words(0)
    if (words[:, 0] == TOO_LONG).any():
        return None
    change = np.flatnonzero((words[1:] != words[:-1]).any(axis=1)) + 1
    starts = [0, *change.tolist()]
    return [columns.field(line, 0) for line in starts], starts


def _fast_qrels(lines: Iterator[str], tokens: dict[str, int]) -> dict[str, dict[str, int]] | None:
    pool: dict[str, dict[str, int]] = {}
    docs: dict[str, int] = {}
    previous = None
    count = 0
    try:
        for count, line in enumerate(lines, start=1):  # noqa: B007 - count is the line total
            # split_fields() inlined for ASCII lines: a call per line costs the fast path measurably.
            query, _iteration, doc, grade = line.split() if line.isascii() else split_fields(line)
            if query != previous:
                found = pool.get(query)
                docs = found if found is not None else pool.setdefault(query, {})
                previous = query
            docs[doc] = tokens[grade]
    except (ValueError, KeyError):
        return None
    if sum(map(len, pool.values())) != count:  # some (query, document) was judged twice
        return None
    if bad_id_chars("".join(pool)) or any(bad_id_chars("".join(docs)) for docs in pool.values()):
        return None  # the careful pass names the line and the character
    return pool


def _careful_qrels(lines: Iterator[str], grades: GradeReader, name: str) -> Pool:
    builder = QrelsBuilder(name)
    for number, line in enumerate(lines, start=1):
        fields = split_fields(line)
        if not fields:
            continue
        if len(fields) != 4:
            raise EvaluationError(
                gettext_noop("expected 4 fields 'query iteration document grade', found %(found)s: %(line)r"),
                {"found": len(fields), "line": line.strip()},
                source=name,
                line=number,
            )
        query, _iteration, doc, token = fields
        builder.add(query, doc, grades.from_token(token, query, doc, number), number)
    return builder.pool()


def read_trec_run(
    source: Source, *, name: str | None = None, rules: RunRules = COMPARE, collect: int | None = None
) -> Run:
    """`collect`: gather up to that many problems (a refused line is skipped) and raise them as one
    EvaluationErrors, instead of the first (problems.py). The fast passes find none or give way."""
    system = run_name(source, name)
    problems = Problems(collect)
    source = replayable(source)  # both passes read it

    def read(open_lines: Callable[[], Iterator[str]], source_label: str) -> Run:
        nonlocal system
        data = usual_bytes(source)  # before any pass reads the stream
        if rules.name_by_system:
            system = _one_tag(open_lines()) or system
        # The columns are handed over, not kept here: the reader lets go of those it has read.
        fast = (
            None
            if data is None
            else _columns_run(split_columns(data, (0, 2, 4), 6, more=True), system, source_label)
        )
        like_c = fast is None and _splits_like_c(data, open_lines)
        del data  # before a second pass holds its own copy
        if like_c:
            fast = _fast_run(open_lines(), system, source_label)
        # A fast pass takes any ID length; stored IDs longer than the columns go to the careful one.
        if fast is not None and not (rules.stored_ids and _longest_id(fast) > MAX_ID_LENGTH):
            return fast
        return _careful_run(open_lines(), system, source_label, rules, problems)

    return problems.reading(lambda: with_source(source, read))


def _one_tag(lines: Iterator[str]) -> str | None:
    """The tag every line of a run gives (its sixth field), or None when they give several."""
    tags: set[str] = set()
    for line in lines:
        fields = split_fields(line, 5)
        if len(fields) == 6:
            tags.add(split_fields(fields[5], 1)[0])  # text after the tag is not part of it
            if len(tags) > 1:
                return None
    return next(iter(tags), None)


def _columns_run(columns: Columns | None, system: str, source: str) -> Run | None:
    """The run of a usual TREC run file (columns: query, document, score), or None."""
    if columns is None:
        return None
    blocks = _query_blocks(columns)
    if blocks is None:
        return None
    block_queries, block_starts = blocks
    scores = _column_scores(columns, 2)
    if scores is None:
        return None
    columns = columns.only(1)  # the query and score offsets are let go before the IDs are made
    docs = columns.strings(0)
    words = columns.words(0)
    del columns
    # The file is printable ASCII: no ID holds a character the ID rule refuses.
    return _finish_run(block_queries, block_starts, docs, scores, system, source, words=words, plain=True)


_DECIMAL = np.zeros(256, dtype=bool)
_DECIMAL[np.frombuffer(b"0123456789+-.eE\n", dtype=np.uint8)] = True
_PLUS = ord("+")


def _column_scores(columns: Columns, j: int) -> np.ndarray | None:
    """Column j as scores, or None for the line reader: anything but digits, signs, "." and
    exponents (inf, nan, "1_000") is left to it. numpy reads the joined column as float() reads
    each token, value and refusal alike, on that alphabet (tests/evaluation/test_columns.py),
    without a string an each."""
    joined = columns.joined(j)
    if not _DECIMAL[joined].all():
        return None
    if (columns.text[columns.starts[:, j]] == _PLUS).any():
        return None  # numpy reads "+2"; the number rule refuses it (values.py), by line
    try:
        scores = np.fromstring(memoryview(joined).tobytes(), dtype=np.float64, sep="\n")
    except ValueError:  # "1e", "--1": not numbers
        return None
    if len(scores) != columns.lines:
        return None
    return _plain_scores(scores, lambda row: columns.field(row, j))


def _plain_scores(scores: np.ndarray, token_of: Callable[[int], str]) -> np.ndarray | None:
    """`scores` when all are finite and none is a non-zero number read as 0 (`token_of(row)`: the
    row's score as written); else None, for the careful pass to refuse by line."""
    if not np.isfinite(scores).all():
        return None
    zeros = np.flatnonzero(scores == 0.0)
    if any(underflows(token_of(i), 0.0) for i in zeros.tolist()):
        return None  # the careful pass refuses it, naming the line
    return scores


def _longest_id(run: Run) -> int:
    """The longest query or document ID of `run` (a longer one than stored IDs may be sends the
    read to the careful pass, which names its line)."""
    queries = max(map(len, run.query_ids), default=0)
    return max([queries, *(max(map(len, run.ranking(q)), default=0) for q in run.query_ids)])


def _fast_run(lines: Iterator[str], system: str, source: str) -> Run | None:
    block_queries: list[str] = []
    block_starts: list[int] = []
    docs: list[str] = []
    tokens: list[str] = []
    add_doc = docs.append
    add_token = tokens.append
    previous = None
    try:
        for line in lines:
            # maxsplit=5: the tag keeps whatever trails it, which trec_eval also ignores.
            query, _q0, doc, _rank, score, _tag = (
                line.split(None, 5) if line.isascii() else split_fields(line, 5)
            )
            if query != previous:
                block_starts.append(len(docs))
                block_queries.append(query)
                previous = query
            add_doc(doc)
            add_token(score)
        # numpy (like float()) also reads "1_000" and non-ASCII digits: leave those to the careful
        # pass, which refuses them. ASCII without "_" leaves only plain decimals (and inf/nan).
        joined = "".join(tokens)
        if not joined.isascii() or "_" in joined:
            return None
        if "+" in joined and any(token.startswith("+") for token in tokens):
            return None  # the number rule refuses "+2" (values.py), which numpy reads
        del joined
        scores = _plain_scores(np.array(tokens, dtype=np.float64), tokens.__getitem__)
    except ValueError:
        return None
    del tokens  # before the Run encodes its IDs: an upload's peak memory
    if scores is None:
        return None
    return _finish_run(block_queries, block_starts, docs, scores, system, source)


def _finish_run(
    block_queries: list[str],
    block_starts: list[int],
    docs: list[str],
    scores: np.ndarray,
    system: str,
    source: str,
    *,
    words: IdWords | None = None,
    plain: bool = False,
) -> Run | None:
    """The Run of a file's rows (each query's rows in blocks), or None for the careful pass.
    `words`: the document IDs' words, made from the file; `plain`: the file is printable ASCII
    (no ID holds a character the ID rule refuses)."""
    n = len(docs)
    lines_of_rows = np.arange(1, n + 1, dtype=np.int64)
    block_ends = [*block_starts[1:], n]
    if len(set(block_queries)) == len(block_queries):
        query_ids = block_queries
        offsets = np.array([*block_starts, n], dtype=np.int64)
    else:
        # Rows of a query are spread over the file (results.trunc interleaves topics): group
        # them by first appearance, keeping file order inside each query.
        code_of: dict[str, int] = {}
        block_codes = [code_of.setdefault(query, len(code_of)) for query in block_queries]
        lengths = np.subtract(block_ends, block_starts)
        row_codes = np.repeat(np.array(block_codes, dtype=np.int64), lengths)
        order = np.argsort(row_codes, kind="stable")
        docs_array = np.empty(n, dtype=object)
        docs_array[:] = docs
        docs = docs_array[order].tolist()
        del docs_array
        if words is not None:
            words = words[order]
        scores = scores[order]
        lines_of_rows = lines_of_rows[order]
        query_ids = list(code_of)
        offsets = np.zeros(len(query_ids) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_codes, minlength=len(query_ids)), out=offsets[1:])
    bounds = offsets.tolist()
    if any(len(set(docs[a:b])) != b - a for a, b in zip(bounds, bounds[1:], strict=False)):
        return None  # a duplicate document: the careful pass names both lines
    if not plain and (bad_id_chars("".join(query_ids)) or bad_id_chars("".join(docs))):
        return None  # the careful pass names the line and the character
    return Run._trusted(
        query_ids,
        docs,
        offsets,
        scores=scores,
        lines=lines_of_rows,
        name=system,
        source=source,
        id_words=words,
    )


def _careful_run(
    lines: Iterator[str], system: str, name: str, rules: RunRules = COMPARE, problems: Problems | None = None
) -> Run:
    problems = problems if problems is not None else Problems()
    builder = RunBuilder(name, rules, problems)
    for number, line in enumerate(lines, start=1):
        fields = split_fields(line)
        if not fields:
            continue
        try:
            if len(fields) < 6:
                raise EvaluationError(
                    gettext_noop(
                        "expected 6 fields 'query Q0 document rank score tag', found %(found)s: %(line)r"
                    ),
                    {"found": len(fields), "line": line.strip()},
                    source=name,
                    line=number,
                )
            query, _q0, doc, _rank, token = fields[:5]
            score = parse_score(token, query, doc, source=name, line=number)
            builder.add(query, doc, score, None, number)
        except EvaluationError as error:
            problems.add(error)  # raises it again unless collecting
    return builder.run(system)


def trec_writable(value: str) -> bool:
    """Whether a TREC line can hold `value` as one field: nothing the reader splits at (a no-break
    or ideographic space inside an ID is part of it)."""
    return bool(value) and not _ASCII_SPACE.search(value) and not _INFO_SEPARATOR.search(value)


def _check_field(value: str, query: str | None = None) -> str:
    """A query ID (query None) or a document ID of `query` that a TREC line can hold."""
    if not trec_writable(value):
        if query is None:
            raise EvaluationError(
                gettext_noop("query ID %(value)r cannot be written to a TREC file (it contains whitespace)"),
                {"value": value},
            )
        raise EvaluationError(
            gettext_noop(
                "query %(query)r: document ID %(value)r cannot be written to a TREC file (it contains "
                "whitespace)"
            ),
            {"query": query, "value": value},
            query=query,
        )
    return value


def write_trec_qrels(target: Source, pool: Pool) -> None:
    """One line `query 0 document grade` per judgment, queries in pool order."""
    stream, owned = open_target(target)
    try:
        for query in pool:
            _check_field(query)
            docs = pool[query]
            for doc in docs:
                _check_field(doc, query)
            stream.writelines(f"{query} 0 {doc} {grade}\n" for doc, grade in docs.items())
    finally:
        if owned:
            stream.close()


def write_trec_run(target: Source, run: Run, *, tag: str | None = None) -> None:
    """One line `query Q0 document rank score tag` per row, in the run's input order.

    The rank column is the position in that order. A TREC run always carries scores: a rank-only
    run is written with score = -rank, which orders it the same way.
    """
    label = "".join(ch if not ch.isspace() else "_" for ch in (tag or run.name)) or "run"
    stream, owned = open_target(target)
    try:
        for query in run.query_ids:
            _check_field(query)
            docs = run.ranking(query)
            for doc in docs:
                _check_field(doc, query)
            scores = run.scores_of(query)
            shown = (
                [repr(s) for s in scores]
                if scores is not None
                else [str(-r) for r in range(1, len(docs) + 1)]
            )
            stream.writelines(
                f"{query} Q0 {doc} {rank} {score} {label}\n"
                for rank, (doc, score) in enumerate(zip(docs, shown, strict=True), start=1)
            )
    finally:
        if owned:
            stream.close()
