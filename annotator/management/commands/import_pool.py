"""`manage.py import_pool`: a judgments file as the next frozen version of a pool, source `imported`.

All or nothing: the first bad line stops it with exit status 2 and a one-line error naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotator.management.commands._grading_import import counted
from annotator.models import Pool, Project
from annotator.pools.files import EXPORT_FORMATS, pool_import
from annotator.pools.services import PoolImportError
from evaluation.formats.registry import detect_format, qrels_name


def fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = "Import a judgments file (TREC qrels, CSV, JSONL) as a frozen, externally sourced pool version."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("file", help="the judgments file")
        parser.add_argument(
            "--pool", required=True, help="pool name: the next version of it (created if missing)"
        )
        parser.add_argument("--by", required=True, help="username of the project owner doing the import")
        parser.add_argument(
            "--format",
            default="auto",
            help=f"auto (from the extension) or one of {', '.join(EXPORT_FORMATS)}",
        )
        parser.add_argument(
            "--grade-map",
            default="",
            help="map grades outside 0..3, e.g. --grade-map=-1:0,4:3 (with '=': the value starts with '-')",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise fail(f"no project {options['project']!r}")
        user = get_user_model().objects.filter(username=options["by"]).first()
        if user is None:
            raise fail(f"no user {options['by']!r}")
        path = Path(options["file"])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise fail(f"cannot read {path}: {exc.strerror or exc}") from exc
        fmt = options["format"]
        if fmt == "auto":
            fmt = qrels_name(detect_format(path.name, kind="qrels"))
        elif fmt not in EXPORT_FORMATS:
            raise fail(f"unknown format {fmt!r}; allowed: auto, {', '.join(EXPORT_FORMATS)}")
        pool = Pool.objects.filter(project=project, name=options["pool"]).first()
        try:
            version = pool_import(
                project=project,
                by=user,
                data=data,
                file_name=path.name,
                fmt=fmt,
                pool=pool,
                pool_name=options["pool"],
                grade_map=options["grade_map"],
                max_unpacked=None,  # the owner's own file on their own disk: no upload limit
            )
        except PermissionDenied as exc:
            raise fail(str(exc)) from exc
        except PoolImportError as exc:
            raise fail(str(exc)) from exc
        self.stdout.write(
            f"Imported {path.name} as {version.pool.name} version {version.number}: "
            f"{counted(version.counts['judgments'], 'judgment', 'judgments')} in "
            f"{counted(version.counts['queries'], 'query', 'queries')}, sha256 {version.sha256}"
        )
