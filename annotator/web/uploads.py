"""Uploaded files as text: the one rule for what bytes an upload may hold, used by every importer.

UTF-8 (a byte-order mark allowed) and no NUL, which PostgreSQL cannot store in text: such a file
would import on SQLite and fail on PostgreSQL. Each importer wraps `UploadTextError`, all or nothing.
"""

from __future__ import annotations

from django import forms
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
