"""A version's exports: which the version page offers, whether they are prepared by a job (large
versions), and `export_file`, the one builder of a download and of an `export_pool` job."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.utils.translation import gettext as _

from annotator.jobs.services import runs_inline
from annotator.models import PoolVersion
from annotator.pools.files import SPREADSHEET_FORMAT, PoolExportError, export_data, export_zip


@dataclass(frozen=True)
class ExportChoice:
    """One export the version page offers: `fields` as the download's query or the job's form."""

    label: str
    fields: dict[str, str]

    @property
    def query(self) -> str:
        return urlencode(self.fields)

    @property
    def data_fields(self) -> dict[str, str]:
        return {**self.fields, "part": "data"}

    @property
    def data_query(self) -> str:
        return urlencode(self.data_fields)


def export_choices(formats: list[tuple[str, str]], spreadsheet: bool) -> list[ExportChoice]:
    """The version page's exports: each format, and the spreadsheet-safe CSV when IDs need it."""
    choices = [ExportChoice(label, {"format": fmt}) for fmt, label in formats]
    if spreadsheet:
        choices.append(
            ExportChoice(_("spreadsheet-safe CSV"), {"format": SPREADSHEET_FORMAT, "variant": "spreadsheet"})
        )
    return choices


def exports_in_background(version: PoolVersion) -> bool:
    return not runs_inline("export", version.counts.get("judgments", 0))


def export_file(
    version: PoolVersion, fmt: str, *, part: str = "", spreadsheet: bool = False
) -> tuple[str, bytes]:
    """(file name, bytes) of one export: the zip with its manifest, or (`part` "data") the data file
    alone. The one builder of the download and of the export job. PoolExportError when the version
    fails its integrity check (never a file that does not match its hash) or `fmt` cannot hold an ID."""
    if version.integrity_problems():
        raise PoolExportError(_("This version failed its integrity check, so it cannot be exported."))
    if part == "data":
        name, text = export_data(version, fmt, spreadsheet=spreadsheet)
        return name, text.encode("utf-8")
    return export_zip(version, fmt, spreadsheet=spreadsheet)
