"""Pool files: a version <-> TREC qrels / CSV / JSONL bytes, its manifest and the export zip. The only
pool-file code: the pages, the import_pool / export_pool commands and the comparison export use it.

The readers and writers themselves are evaluation.formats'; this adds the database's rules (ID
length, the canonical text) and the zip's manifest check.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from datetime import UTC
from typing import Any, Literal

from django.contrib.auth.models import User
from django.db import transaction
from django.template.defaultfilters import filesizeformat
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy

from annotator.models import Permission, Pool, PoolJudgment, PoolVersion, PoolVersionSource, Project
from annotator.pools.models import check_judgment
from annotator.pools.services import PoolImportError, pool_version_create, require_permission
from annotator.web.errors import describe_error, located
from annotator.web.uploads import ZIP_MAGIC, UploadTextError, upload_limit, upload_name, upload_text
from evaluation.formats import EvaluationError, read_qrels, write_qrels
from evaluation.formats import Pool as Qrels
from evaluation.formats import parse_grade_map as parse
from evaluation.formats.csv import write_csv_qrels
from evaluation.formats.registry import FORMATS, qrels_names

# ---- Imports --------------------------------------------------------------------------------------


@transaction.atomic
def pool_import(
    *,
    project: Project,
    by: User,
    data: bytes,
    file_name: str,
    fmt: str,
    pool_name: str = "",
    pool: Pool | None = None,
    grade_map: Mapping[int, int] | str = "",
    max_unpacked: int | Literal["upload"] | None = "upload",
) -> PoolVersion:
    """A qrels / CSV / JSONL file -> the next version of `pool` (or of a new pool `pool_name`).

    Owner only. All or nothing: any bad line refuses the whole file (PoolImportError, with the
    line number). Grades must be 0..3 unless `grade_map` (e.g. "-1:0,4:3") maps them.
    A zip exported by this app (data file + manifest.json) imports too: its format comes from
    the manifest, and the new version must hash to the manifest's SHA-256. `max_unpacked` caps
    what its members may unpack to: by default the pool upload limit, since a small zip can unpack
    to gigabytes (None: no cap, for `import_pool` reading the owner's own disk).
    """
    require_permission(project, by, Permission.IMPORT_JUDGMENTS)
    file_name = upload_name(file_name)
    if pool is not None and pool.project_id != project.pk:
        raise PoolImportError(_("That pool belongs to another project."))
    mapping = parse_grade_map(grade_map) if isinstance(grade_map, str) else dict(grade_map)
    expected_sha = None
    if data.startswith(ZIP_MAGIC):
        if mapping:
            raise PoolImportError(
                _("A grade map does not apply to an exported pool: its grades are 0..3 already.")
            )
        limit = upload_limit("pools") if max_unpacked == "upload" else max_unpacked
        file_name, data, fmt, expected_sha = _exported_data(data, file_name, limit)
    version = _import_rows(project, by, data, file_name, fmt, pool_name, pool, mapping)
    if expected_sha is not None and version.sha256 != expected_sha:
        # Raised inside this function's transaction: the version just written is rolled back.
        raise PoolImportError(
            _(
                "The judgments in the zip hash to %(got)s…, not to the %(expected)s… its manifest.json "
                "names: the archive was changed after export. Nothing was imported."
            )
            % {"got": version.sha256[:12], "expected": expected_sha[:12]}
        )
    return version


def _exported_data(archive: bytes, zip_name: str, limit: int | None) -> tuple[str, bytes, str, str]:
    """(data file name, its bytes, format, pool SHA-256) from a zip this app exported, checked
    against its manifest.json. Only those two members are read (nothing is extracted to disk), and
    at most `limit` bytes of each are unpacked (counted while unpacking: the sizes a zip declares
    are its own claim, and a small zip can unpack to gigabytes)."""

    def refuse(problem: str) -> PoolImportError:
        return _refusal(zip_name, None, problem)

    not_an_export = _(
        "its manifest.json is not the manifest of a pool export (it needs data_file, format and sha256)."
    )
    try:
        with zipfile.ZipFile(io.BytesIO(archive)) as bundle:
            names = set(bundle.namelist())
            if "manifest.json" not in names:
                raise refuse(
                    _(
                        "this zip has no manifest.json, so it is not a pool this app exported. "
                        "Upload the qrels, CSV or JSONL file itself."
                    )
                )

            def read(name: str) -> bytes:
                with bundle.open(name) as member:
                    data = member.read() if limit is None else member.read(limit + 1)
                if limit is not None and len(data) > limit:
                    raise refuse(
                        _("%(member)s is larger than %(limit)s once unpacked.")
                        % {"member": name, "limit": filesizeformat(limit)}
                    )
                return data

            try:
                manifest = json.loads(read("manifest.json"))
                data_file = manifest["data_file"]
                data_name, data_sha, fmt, pool_sha = (
                    data_file["name"],
                    data_file["sha256"],
                    manifest["format"],
                    manifest["sha256"],
                )
            except (ValueError, KeyError, TypeError, RecursionError):
                raise refuse(not_an_export) from None
            if (
                not all(isinstance(v, str) for v in (data_name, data_sha, fmt, pool_sha))
                or fmt not in READER_FORMATS
            ):
                raise refuse(not_an_export)
            if manifest.get("spreadsheet_safe"):
                raise refuse(
                    _(
                        "this is the spreadsheet-safe CSV, whose IDs carry an added ', not the hashed form. "
                        "Import the plain CSV, qrels or JSONL export of the version instead."
                    )
                )
            if data_name not in names:
                raise refuse(
                    _("the data file %(member)s its manifest names is not in the zip.")
                    % {"member": data_name}
                )
            data = read(data_name)
    # What a damaged or foreign zip raises while it is opened or read: a bad structure or CRC,
    # an encrypted member (RuntimeError), an unsupported compression (NotImplementedError), a
    # name flagged UTF-8 that is not (UnicodeDecodeError), a truncated or corrupt stream.
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        RuntimeError,
        NotImplementedError,
        UnicodeDecodeError,
        EOFError,
        OSError,
        zlib.error,
    ):
        raise refuse(_("the zip archive cannot be read (damaged, encrypted or incomplete).")) from None
    if hashlib.sha256(data).hexdigest() != data_sha:
        raise refuse(
            _(
                "%(member)s does not match the SHA-256 in manifest.json: the archive was changed after "
                "export. Nothing was imported."
            )
            % {"member": data_name}
        )
    return data_name, data, fmt, pool_sha


def _import_rows(
    project: Project,
    by: User,
    data: bytes,
    file_name: str,
    fmt: str,
    pool_name: str,
    pool: Pool | None,
    mapping: dict[int, int],
) -> PoolVersion:
    rows = read_judgments(data, fmt, mapping, name=file_name)
    if not rows:
        raise PoolImportError(_("%(file)s contains no judgments.") % {"file": file_name})
    if pool is None:
        pool_name = pool_name.strip()
        if not pool_name:
            raise PoolImportError(_("Name the new pool, or choose an existing one."))
        limit = Pool._meta.get_field("name").max_length or 200
        if len(pool_name) > limit:
            raise PoolImportError(
                _("A pool name has at most %(max)d characters; this one has %(length)d.")
                % {"max": limit, "length": len(pool_name)}
            )
        if Pool.objects.filter(project=project, name=pool_name).exists():
            raise PoolImportError(
                _("A pool named %(name)s exists already: choose it to add a version, or pick another name.")
                % {"name": pool_name}
            )
        pool = Pool.objects.create(project=project, name=pool_name)
    file_sha = hashlib.sha256(data).hexdigest()
    lines = len(rows)
    judgments = _handed_over(rows, PoolVersionSource.IMPORTED.value)  # listed once, there
    del rows
    return pool_version_create(
        pool=pool,
        judgments=judgments,
        source=PoolVersionSource.IMPORTED,
        by=by,
        provenance={
            "imported": {
                "file_name": file_name,
                "uploaded_by": by.get_username(),
                "file_sha256": file_sha,
                "format": fmt,
                "grade_map": {str(k): v for k, v in sorted(mapping.items())},
                "lines": lines,
            }
        },
        file_name=file_name[:255],
        file_sha256=file_sha,
        refuse_unchanged=True,
    )


def _handed_over(rows: list[tuple[str, str, int]], source: str) -> Iterator[tuple[str, str, int, str]]:
    """Each row with its source, in order, taken out of `rows` as it is given: the writer lists
    them again, and both lists at once would hold every row twice."""
    rows.reverse()
    while rows:
        query, doc, grade = rows.pop()
        yield query, doc, grade, source


# ---- Exports (the readers and writers themselves live in evaluation/formats) ----------------------

# Pool files' format names (also their extensions) -> the registry's: TREC judgments are "qrels".
READER_FORMATS = qrels_names()
EXPORT_FORMATS: dict[str, Any] = {
    name: _lazy(FORMATS[fmt].qrels_label) for name, fmt in READER_FORMATS.items()
}
# How to recompute the SHA-256 from each export with standard tools (also in evaluation/README.md).
# `LC_ALL=C sort` orders UTF-8 bytes, which is Unicode code point order; TAB sorts before any ID
# character, so sorting whole lines sorts by (query_id, doc_id).
RECOMPUTE = {
    "qrels": 'awk \'{print $1 "\\t" $3 "\\t" $4}\' FILE | LC_ALL=C sort | sha256sum',
    "csv": "tail -n +2 FILE | tr ',' '\\t' | LC_ALL=C sort | sha256sum   (IDs without commas or quotes)",
    "jsonl": "jq -r '[.query_id, .doc_id, (.grade|tostring)] | join(\"\\t\")' FILE "
    "| LC_ALL=C sort | sha256sum",
}


class PoolExportError(Exception):
    """This version cannot be written in the chosen format (e.g. a space inside an ID in qrels)."""


def parse_grade_map(text: str) -> dict[int, int]:
    """'-1:0,4:3' -> {-1: 0, 4: 3}; PoolImportError naming the bad entry."""

    try:
        return parse(text)
    except EvaluationError as exc:
        raise PoolImportError(_("Grade map refused: %(error)s") % {"error": describe_error(exc)}) from exc


def read_judgments(
    data: bytes, fmt: str, grade_map: Mapping[int, int] | None = None, name: str = "upload"
) -> list[tuple[str, str, int]]:
    """Parse a judgments file with evaluation.formats; PoolImportError names the line on any problem."""

    if fmt not in READER_FORMATS:
        raise PoolImportError(
            _("Unknown format “%(fmt)s”: choose one of %(allowed)s.")
            % {"fmt": fmt, "allowed": ", ".join(READER_FORMATS)}
        )
    try:
        upload_text(data)  # the uploads' rule (UTF-8, no NUL); the text itself is not kept
    except UploadTextError as exc:
        raise _refusal(name, exc.line, exc.message) from None
    # A text stream over the bytes, decoded as the reader goes: a StringIO of the whole text
    # holds 4 bytes a character, and the TREC reader's column pass reads the bytes themselves.
    buffer = io.BytesIO(data if isinstance(data, bytes) else data.encode("utf-8"))  # shares `data`
    buffer.name = name  # the readers put it in their messages
    newline = FORMATS[READER_FORMATS[fmt]].newline
    stream = io.TextIOWrapper(buffer, encoding="utf-8-sig", newline=newline)
    try:
        qrels = read_qrels(stream, format=READER_FORMATS[fmt], grade_map=dict(grade_map or {}))
    except EvaluationError as exc:
        raise PoolImportError(_("Nothing was imported: %(error)s") % {"error": describe_error(exc)}) from exc
    rows = [(q, d, g) for q in qrels for d, g in qrels[q].items()]
    del qrels
    # Stricter than the readers: an ID must fit the database column and the tab-separated
    # canonical text the hash is computed over. The reader keeps no line numbers, so the line
    # is where the ID first appears in the file: the first value refused, in file order, is the
    # one named (no set of every ID is built to visit each once).
    limit = PoolJudgment._meta.get_field("doc_id").max_length or 255
    for value in (value for q, d, _g in rows for value in (q, d)):
        if len(value) > limit:
            problem = _("ID %(value)s has %(length)d characters; at most %(max)d are allowed.")
        elif value != value.strip() or any(c in value for c in "\t\n\r"):
            problem = _("ID %(value)s starts or ends with spaces, or contains a tab or line break.")
        else:
            continue
        text = upload_text(data)  # decoded again on this refusal only
        line = text.count("\n", 0, max(text.find(value), 0)) + 1
        # Quoted as the readers' messages quote values on a page (“q1”), repr's escapes kept.
        shown = "“" + repr(value if len(value) <= 40 else value[:39] + "…")[1:-1] + "”"
        raise _refusal(name, line, problem % {"value": shown, "length": len(value), "max": limit})
    try:
        # The backstop, row by row: the reader refused duplicates (it holds judgments by pair) and
        # bad grades; the whole text is made once, by the writer.
        for query, doc, grade in rows:
            check_judgment(query, doc, grade)
    except ValueError as exc:
        raise _refusal(name, None, str(exc)) from exc
    return rows


def _refusal(name: str, line: int | None, problem: str) -> PoolImportError:
    """ "Nothing was imported: file NAME, line N: PROBLEM", located as the readers' own refusals
    are (annotator.web.errors.located), so every refusal of a pool file reads alike."""

    return PoolImportError(
        _("Nothing was imported: %(error)s") % {"error": located(problem, file=name, line=line)}
    )


def _file_stem(version: PoolVersion) -> str:
    # allow_unicode: a Chinese pool name stays readable ("退款-v1", not "set-v1").
    return f"{slugify(version.pool.name, allow_unicode=True) or f'pool-{version.pool_id}'}-v{version.number}"


# The spreadsheet-safe CSV (ids.spreadsheet_safe) is a file to open, not to import or hash: its
# manifest says so in place of the recipe, which would recompute another hash from it.
SPREADSHEET_FORMAT = "csv"
SPREADSHEET_NOTE = (
    "Spreadsheet-safe CSV: IDs starting with =, +, -, @, a tab or a carriage return are written with "
    "a ' in front, so a spreadsheet shows them as text instead of running them as formulas. This is "
    "not the hashed form: sha256 is computed over the IDs without that ', and this file does not "
    "import back. For the hashed form, download the plain CSV (?format=csv), qrels or JSONL export, "
    "whose recompute_sha256 gives sha256."
)


def export_data(version: PoolVersion, fmt: str, *, spreadsheet: bool = False) -> tuple[str, str]:
    """(file name, text) of `version` in `fmt`, written by evaluation.formats from the hash-checked
    judgments; `spreadsheet`: the spreadsheet-safe CSV (SPREADSHEET_NOTE)."""

    if fmt not in READER_FORMATS:
        raise PoolExportError(
            _("Unknown format “%(fmt)s”: choose one of %(allowed)s.")
            % {"fmt": fmt, "allowed": ", ".join(READER_FORMATS)}
        )
    if spreadsheet and fmt != SPREADSHEET_FORMAT:
        raise PoolExportError(_("The spreadsheet-safe variant is a CSV: ask for format=csv."))
    stream = io.StringIO()
    qrels = Qrels(version.judgments_by_query())
    try:
        if spreadsheet:
            write_csv_qrels(stream, qrels, spreadsheet=True)
        else:
            write_qrels(stream, qrels, format=READER_FORMATS[fmt])
    except EvaluationError as exc:
        raise PoolExportError(
            _("This version cannot be written as %(fmt)s: %(error)s")
            % {"fmt": fmt, "error": describe_error(exc)}
        ) from exc
    return f"{_file_stem(version)}{'-spreadsheet' if spreadsheet else ''}.{fmt}", stream.getvalue()


def export_manifest(
    version: PoolVersion, fmt: str, data_name: str, data: bytes, *, spreadsheet: bool = False
) -> dict[str, Any]:
    manifest = version.manifest(fmt)
    manifest["data_file"] = {
        "name": data_name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }
    if spreadsheet:
        manifest["spreadsheet_safe"] = {"hashed_form": False, "note": SPREADSHEET_NOTE}
    else:
        manifest["recompute_sha256"] = RECOMPUTE[fmt].replace("FILE", data_name)
    return manifest


def export_zip(version: PoolVersion, fmt: str, *, spreadsheet: bool = False) -> tuple[str, bytes]:
    """(file name, zip bytes): the data file plus manifest.json. Same version, same bytes."""
    data_name, text = export_data(version, fmt, spreadsheet=spreadsheet)
    data = text.encode("utf-8")
    manifest = export_manifest(version, fmt, data_name, data, spreadsheet=spreadsheet)
    manifest_text = json.dumps(manifest, ensure_ascii=False, indent=2) + "\n"
    # Timestamps from the freeze (not "now") so downloading twice gives identical archives.
    stamp = version.frozen_at.astimezone(UTC).timetuple()[:6]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, payload in ((data_name, data), ("manifest.json", manifest_text.encode("utf-8"))):
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, payload)
    return f"{_file_stem(version)}-{fmt}{'-spreadsheet' if spreadsheet else ''}.zip", buffer.getvalue()
