"""Shared parts of the import and export commands (documents, queries, candidates, pools)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotator.documents.readers import ImportFileError, decode_upload, unwritable_ids_warning
from annotator.models import Project
from evaluation.formats.registry import FORMATS, detect_format, names


def counted(n: int, singular: str, plural: str) -> str:
    """ "1 query", "2 queries": the commands' English output (the web pages use ngettext)."""
    return f"{n} {singular if n == 1 else plural}"


def bad_input(message: str) -> CommandError:
    """A refusal of the command's input: exit status 2, like `evaluate` (1 is for crashes)."""
    return CommandError(message, returncode=2)


def add_project_argument(parser: CommandParser) -> None:
    parser.add_argument("project", help="slug of the project (as in /p/<slug>/)")


def get_project(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise bad_input(f"No project with slug {slug!r}.")
    return project


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise bad_input(f"Cannot read {path}: {error.strerror or error}") from None


def file_error(path: str, error: ImportFileError) -> CommandError:
    lines = [f"{path}: nothing was imported."] + [f"  {message}" for message in error.messages()]
    return bad_input("\n".join(lines))


class Progress:
    """Prints "n / total (percent, rate)" at most every second, for large files."""

    def __init__(self, command: BaseCommand, what: str) -> None:
        self.command, self.what = command, what
        self.started = self.last = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last < 1 and done != total:
            return
        self.last = now
        rate = done / max(now - self.started, 1e-9)
        percent = 100 * done / total if total else 100
        self.command.stderr.write(f"  {self.what}: {done} / {total} ({percent:.0f}%, {rate:.0f}/s)")


class RecordImportCommand(BaseCommand):
    """`import_documents` and `import_queries`: read a CSV/JSONL file whole, then store it all or nothing."""

    noun = ("", "")  # ("document", "documents") / ("query", "queries"), for the progress lines
    reader: Callable[[bytes, str], list[Any]]
    importer: Callable[..., Any]

    def add_arguments(self, parser: CommandParser) -> None:
        add_project_argument(parser)
        parser.add_argument("file", help="CSV or JSONL file ('-' reads standard input; then give --format)")
        parser.add_argument(
            "--format", choices=names("records"), default="", help="default: from the file name"
        )
        parser.add_argument("--dry-run", action="store_true", help="validate and count, then roll back")

    def handle(self, *args: Any, **options: Any) -> None:
        project = get_project(options["project"])
        path = options["file"]
        fmt = detect_format(path, options["format"], kind="records")
        if not FORMATS[fmt].records:
            try:
                decode_upload(
                    read_bytes(path)
                )  # a zip (e.g. a pool export) is refused as one, whatever its name
            except ImportFileError as error:
                raise file_error(path, error) from None
            raise bad_input(
                f"{path}: the name does not end in .csv, .jsonl or .ndjson; say which with --format."
            )
        self.stderr.write(f"Reading {path} ({fmt})…")
        try:
            records = self.reader(read_bytes(path), fmt)
        except ImportFileError as error:
            raise file_error(path, error) from None
        action = "checking what an import would do (nothing is stored)" if options["dry_run"] else "storing"
        self.stderr.write(f"{counted(len(records), *self.noun)} valid; {action}…")
        with transaction.atomic():
            summary = self.importer(
                project=project, records=records, on_progress=Progress(self, self.noun[1])
            )
            if options["dry_run"]:
                transaction.set_rollback(True)
        if warning := unwritable_ids_warning(records):
            self.stderr.write(f"Warning: {warning}")
        prefix = "Dry run (nothing stored): " if options["dry_run"] else ""
        self.stdout.write(
            self.style.SUCCESS(
                f"{prefix}created {summary.created}, updated {summary.updated}, unchanged "
                f"{summary.unchanged}; {summary.stale_grades} grades in open sets flagged for re-checking."
            )
        )
