"""Shared parts of the import_documents / import_queries / import_candidates commands."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotator.importers import ImportFileError
from annotator.models import Project


def add_project_argument(parser: CommandParser) -> None:
    parser.add_argument("project", help="slug of the project (as in /p/<slug>/)")


def get_project(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"No project with slug {slug!r}.")
    return project


def read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise CommandError(f"Cannot read {path}: {error.strerror or error}") from None


def file_error(path: str, error: ImportFileError) -> CommandError:
    lines = [f"{path}: nothing was imported."] + [f"  {message}" for message in error.messages()]
    return CommandError("\n".join(lines))


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
