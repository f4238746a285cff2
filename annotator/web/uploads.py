"""Uploaded files as text: the one rule for what bytes an upload may hold, used by every importer.

UTF-8 (a byte-order mark allowed) and no NUL, which PostgreSQL cannot store in text: such a file
would import on SQLite and fail on PostgreSQL. Each importer wraps `UploadTextError`, all or nothing.
"""

from __future__ import annotations

import io
from typing import Literal

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from evaluation.formats.sources import GZIP_MAGIC, ZIP_MAGIC


class UploadForm(forms.Form):
    """A form with file fields. After any error the page comes back without the chosen files (no
    browser keeps a file input's choice across a reload or an htmx swap), so a file field that
    was sent a file says to choose it again, instead of a later "Please select a file"."""

    CHOOSE_AGAIN = gettext_lazy(
        "Choose the file again: a browser does not keep a chosen file when the form comes back with an error."
    )

    def full_clean(self) -> None:
        super().full_clean()
        errors = self.errors  # filled by super().full_clean(): no second validation
        if not self.is_bound or not errors:
            return
        for name, field in self.fields.items():
            sent = self.files.getlist(self.add_prefix(name)) if hasattr(self.files, "getlist") else []
            if isinstance(field, forms.FileField) and sent and name not in errors:
                self.add_error(name, self.CHOOSE_AGAIN)


# What each upload form takes (settings.UPLOAD_LIMITS), and the command that reads the same files
# from the owner's own disk with no limit, which the refusal names.
UploadKind = Literal["documents", "queries", "candidates", "runs", "pools"]
UNLIMITED_COMMANDS: dict[str, str] = {
    "documents": "manage.py import_documents",
    "queries": "manage.py import_queries",
    "candidates": "manage.py import_candidates",
    "runs": "manage.py evaluate",
    "pools": "manage.py import_pool",
}


def upload_limit(kind: UploadKind) -> int:
    """The most bytes an upload of `kind` may have (all its files together)."""
    return int(settings.UPLOAD_LIMITS[kind])


def within_limit[T: UploadedFile | list[UploadedFile]](kind: UploadKind, uploads: T) -> T:
    """`uploads`, or a ValidationError naming the limit and the command with none. Asked of the
    size the multipart parser counted, before a byte is read: a refusal costs no parsing."""
    files = uploads if isinstance(uploads, list) else [uploads]
    size = sum(upload.size or 0 for upload in files)
    limit = upload_limit(kind)
    if size <= limit:
        return uploads
    params = {
        "name": files[0].name,
        "size": filesizeformat(size),
        "limit": filesizeformat(limit),
        "command": UNLIMITED_COMMANDS[kind],
    }
    if len(files) == 1:
        message = _(
            "“%(name)s” is %(size)s, more than the %(limit)s an upload here may have, so it was not "
            "read. The command line has no limit: %(command)s."
        )
    else:
        message = _(
            "These files are %(size)s together, more than the %(limit)s an upload here may have, so "
            "none was read. Upload fewer at once, or use the command line, which has no limit: "
            "%(command)s."
        )
    raise forms.ValidationError(message % params)


def upload_bytes(upload: UploadedFile) -> bytes:
    """The upload's bytes. One held in memory is handed over without a copy (BytesIO.getvalue()
    shares its buffer); one spooled to disk is read once."""
    if isinstance(upload.file, io.BytesIO):
        return upload.file.getvalue()
    upload.seek(0)
    return upload.read()


class UploadTextError(ValueError):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def upload_text(data: bytes | str) -> str:
    """The upload's text without its byte-order mark; UploadTextError names the line otherwise."""
    if isinstance(data, bytes):
        if data.startswith(ZIP_MAGIC):  # e.g. an export of this app: say so, not "not UTF-8"
            raise UploadTextError(1, _("the file is a zip archive; upload the text file inside it instead."))
        if data.startswith(GZIP_MAGIC):
            raise UploadTextError(
                1, _("the file is gzip-compressed; decompress it and upload the text file instead.")
            )
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            # Where on the line, and which byte, as `evaluate` says it: a byte offset alone is no help.
            line_start = data.rfind(b"\n", 0, exc.start) + 1
            raise UploadTextError(
                data.count(b"\n", 0, exc.start) + 1,
                _(
                    "the file is not UTF-8 text: byte 0x%(byte)02x at column %(column)d. Save it as UTF-8 "
                    "and upload again."
                )
                % {"byte": data[exc.start], "column": exc.start - line_start + 1},
            ) from None
    else:
        text = data.removeprefix("\ufeff")
    nul = text.find("\x00")
    if nul >= 0:
        line_start = text.rfind("\n", 0, nul) + 1
        raise UploadTextError(
            text.count("\n", 0, nul) + 1,
            _(
                "the file contains a NUL character (character %(column)d of the line), which nothing here "
                "can store. Remove it and upload again."
            )
            % {"column": nul - line_start + 1},
        )
    return text


def upload_name(name: str) -> str:
    """The file's own name as its uploader knew it, without any directory: provenance and pages
    show what was uploaded, never where a file lay on a server (a command's path, a job's store)."""
    return name.replace("\\", "/").rsplit("/", 1)[-1][:255]
