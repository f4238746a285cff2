"""Upload files of any size for every upload path, and the peak memory of posting one.

Shared by `bench_upload_memory.py` and tests/annotator/web/test_upload_memory.py. The files are
shaped like a team's: TREC runs 100 deep with long document IDs, qrels, help-center documents,
short queries. `post_peak` sends a multipart post through the whole Django stack (middleware,
view, database) and returns tracemalloc's peak over it.
"""

from __future__ import annotations

import io
import json
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.http import HttpResponse
from django.test import Client
from django.test.client import BOUNDARY, MULTIPART_CONTENT, FakePayload, encode_multipart


def _until(size: int, lines: Iterator[bytes], head: bytes = b"") -> bytes:
    """`head` and whole lines, at most `size` bytes (at least one line)."""
    out, total = [head], len(head)
    for line in lines:
        if total + len(line) > size and len(out) > 1:
            break
        out.append(line)
        total += len(line)
    return b"".join(out)


def _run_rows() -> Iterator[tuple[str, str, int, str]]:
    q = 0
    while True:
        for r in range(100):
            yield f"q{q:05d}", f"helpcenter-article-{q * 100 + r:08d}", r + 1, f"{100 - r}.5"
        q += 1


def trec_run(size: int) -> bytes:
    return _until(size, (f"{q} Q0 {d} {r} {s} bm25\n".encode() for q, d, r, s in _run_rows()))


def csv_run(size: int) -> bytes:
    return _until(
        size, (f"{q},{d},{s}\n".encode() for q, d, _r, s in _run_rows()), b"query_id,doc_id,score\n"
    )


def jsonl_run(size: int) -> bytes:
    rows = (json.dumps({"query_id": q, "doc_id": d, "score": float(s)}) for q, d, _r, s in _run_rows())
    return _until(size, (row.encode() + b"\n" for row in rows))


def _judgments() -> Iterator[tuple[str, str, int]]:
    i = 0
    while True:
        yield f"q{i // 100:05d}", f"helpcenter-article-{i:08d}", i % 4
        i += 1


def qrels(size: int) -> bytes:
    return _until(size, (f"{q} 0 {d} {g}\n".encode() for q, d, g in _judgments()))


def csv_qrels(size: int) -> bytes:
    return _until(size, (f"{q},{d},{g}\n".encode() for q, d, g in _judgments()), b"query_id,doc_id,grade\n")


def jsonl_qrels(size: int) -> bytes:
    rows = (json.dumps({"query_id": q, "doc_id": d, "grade": g}) for q, d, g in _judgments())
    return _until(size, (row.encode() + b"\n" for row in rows))


def _counter() -> Iterator[int]:
    i = 0
    while True:
        yield i
        i += 1


def documents(size: int) -> bytes:
    def row(i: int) -> bytes:
        body = f"文档 {i}：报名提交后，请在“我的报名”中修改联系电话。截止时间为活动开始前 48 小时。" * 3
        record = {"doc_id": f"doc-{i:06d}", "title": f"帮助文章 {i}", "body": body}
        return json.dumps(record, ensure_ascii=False).encode() + b"\n"

    return _until(size, map(row, _counter()))


def queries(size: int) -> bytes:
    rows = (f"q{i:06d},how do I change the phone number on booking {i}\n".encode() for i in _counter())
    return _until(size, rows, b"query_id,text\n")


@dataclass(frozen=True)
class UploadPath:
    """One upload form: its URL name, its other fields, the file field and the file's name."""

    url: str
    fields: dict[str, Any]
    field: str
    file_name: str
    make: Callable[[int], bytes]


RUN_FIELDS = {
    "name": "upload",
    "format": "auto",
    "unjudged": "error",
    "ties": "error",
    "missing_queries": "zero",
    "extra_queries": "error",
    "k": 10,
}
POOL_FIELDS = {"format": "auto", "pool_name": "Imported", "grade_map": ""}
# The candidates' grading set is added by the caller (its ID).
PATHS = {
    "documents (JSONL)": UploadPath("import_documents", {"format": ""}, "file", "d.jsonl", documents),
    "queries (CSV)": UploadPath("import_queries", {"format": ""}, "file", "q.csv", queries),
    "candidates (TREC)": UploadPath(
        "import_candidates", {"format": "", "depth": ""}, "files", "r.txt", trec_run
    ),
    "candidates (CSV)": UploadPath(
        "import_candidates", {"format": "", "depth": ""}, "files", "r.csv", csv_run
    ),
    "candidates (JSONL)": UploadPath(
        "import_candidates", {"format": "", "depth": ""}, "files", "r.jsonl", jsonl_run
    ),
    "run (TREC)": UploadPath("run_upload", RUN_FIELDS, "file", "r.txt", trec_run),
    "run (CSV)": UploadPath("run_upload", RUN_FIELDS, "file", "r.csv", csv_run),
    "run (JSONL)": UploadPath("run_upload", RUN_FIELDS, "file", "r.jsonl", jsonl_run),
    "pool (qrels)": UploadPath("pool_import", POOL_FIELDS, "file", "p.qrels", qrels),
    "pool (CSV)": UploadPath("pool_import", POOL_FIELDS, "file", "p.csv", csv_qrels),
    "pool (JSONL)": UploadPath("pool_import", POOL_FIELDS, "file", "p.jsonl", jsonl_qrels),
}


def add_run_ids(project: Any, data: bytes, file_name: str) -> None:
    """The queries and documents a run file names, in `project`: candidates must be known IDs."""
    from annotator.documents.models import content_hash
    from annotator.models import Document, Query
    from evaluation import formats

    run = formats.read_run(
        io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=""), format=_fmt(file_name)
    )
    docs = sorted({doc for query in run.query_ids for doc in run.ranking(query)})
    Query.objects.bulk_create(
        [Query(project=project, external_id=q, text=f"query {q}") for q in run.query_ids],
        ignore_conflicts=True,
    )
    Document.objects.bulk_create(
        [
            Document(project=project, external_id=d, body="body", content_hash=content_hash("", "body", ""))
            for d in docs
        ],
        ignore_conflicts=True,
        batch_size=2000,
    )


def _fmt(file_name: str) -> str:
    return file_name.rsplit(".", 1)[-1] if file_name.endswith((".csv", ".jsonl")) else "trec"


def post_peak(client: Client, url: str, fields: dict[str, Any]) -> tuple[HttpResponse, int]:
    """(response, peak bytes traced) of a multipart post through the client's handler.

    The encoded body is in the request's input stream before tracing starts, as a server's
    socket holds it: what is counted is what the app allocates, from parsing the multipart body
    (a file under FILE_UPLOAD_MAX_MEMORY_SIZE is kept in memory, and counted) to the response.
    Client.post would copy the body inside the measurement, so the environ is built here.
    """
    body = encode_multipart(BOUNDARY, fields)
    environ = client._base_environ(  # type: ignore[attr-defined]  # the test client's own environ
        PATH_INFO=url,
        REQUEST_METHOD="POST",
        CONTENT_TYPE=MULTIPART_CONTENT,
        CONTENT_LENGTH=str(len(body)),
        **{"wsgi.input": FakePayload(body)},
    )
    del body  # the FakePayload holds its own copy
    tracemalloc.start()
    try:
        response = client.handler(environ)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return response, peak
