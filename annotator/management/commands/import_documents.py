"""`manage.py import_documents PROJECT FILE`: documents from CSV or JSONL, all or nothing.

Columns / keys: doc_id and body (required), title, url, unit (document, page or chunk). A
re-import stores changed documents as a new version and flags their grades in open sets for
re-checking; unchanged documents are left alone.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotator.importers import ImportFileError, detect_format, read_documents
from annotator.management.commands._grading_import import (
    Progress,
    add_project_argument,
    file_error,
    get_project,
    read_bytes,
)
from annotator.services.grading import documents_import


class Command(BaseCommand):
    help = "Import documents (CSV or JSONL) into a project, all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        add_project_argument(parser)
        parser.add_argument("file", help="CSV or JSONL file ('-' reads standard input; then give --format)")
        parser.add_argument("--format", choices=["csv", "jsonl"], default="", help="default: from the file name")
        parser.add_argument("--dry-run", action="store_true", help="validate and count, then roll back")

    def handle(self, *args: Any, **options: Any) -> None:
        project = get_project(options["project"])
        path = options["file"]
        fmt = detect_format(path, options["format"])
        if fmt not in ("csv", "jsonl"):
            raise CommandError(f"{path}: the name does not end in .csv or .jsonl; say which with --format.")
        self.stderr.write(f"Reading {path} ({fmt})…")
        try:
            records = read_documents(read_bytes(path), fmt)
        except ImportFileError as error:
            raise file_error(path, error) from None
        self.stderr.write(f"{len(records)} documents are valid; storing…")
        with transaction.atomic():
            summary = documents_import(project=project, records=records, on_progress=Progress(self, "documents"))
            if options["dry_run"]:
                transaction.set_rollback(True)
        prefix = "Dry run (nothing stored): " if options["dry_run"] else ""
        self.stdout.write(self.style.SUCCESS(
            f"{prefix}created {summary.created}, updated {summary.updated}, unchanged {summary.unchanged}; "
            f"{summary.stale_grades} grades in open sets flagged for re-checking."
        ))
