"""Check the grading counters that the database's triggers keep, or rebuild them from the rows.

`manage.py grading_counters` lists every count that disagrees with a recount and exits 1 if any
does; `--recount` rebuilds them all (after a restore or a bulk load made with the triggers off).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction

from annotator.grading import counters


class Command(BaseCommand):
    help = "Check the grading counters against a recount (exit 1 on drift), or --recount them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--recount", action="store_true", help="rebuild every counter from the rows")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["recount"]:
            with transaction.atomic():
                counters.recount(connection)
            self.stdout.write("Recounted every grading counter.")
        found = counters.drift(connection)
        for line in found[:50]:
            self.stdout.write(line)
        if found:
            more = " (the first 50 listed)" if len(found) > 50 else ""
            raise CommandError(f"{len(found)} counters disagree with a recount{more}: run with --recount.")
        self.stdout.write("Every grading counter agrees with a recount.")
