"""`manage.py import_candidates`: pool a grading set's candidates from run files.

All or nothing: the union of each run's top K, every candidate recording which runs pooled it.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction

from annotator.documents.readers import ImportFileError
from annotator.grading.pooling import pool_top_k, read_run
from annotator.grading.services import GradingError, candidates_add
from annotator.management.commands._grading_import import (
    add_project_argument,
    bad_input,
    counted,
    file_error,
    get_project,
    read_bytes,
)
from annotator.models import GradingSet
from annotator.web.converters import parse_id
from evaluation.formats.registry import detect_format, pooled_names


class Command(BaseCommand):
    help = "Add candidates to a grading set from run files (union of each run's top k), all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        add_project_argument(parser)
        parser.add_argument("grading_set", help="name or numeric ID of the grading set")
        parser.add_argument("files", nargs="+", help="run files: TREC, .csv or .jsonl")
        parser.add_argument("--depth", type=int, default=None, help="pool each run's top K per query")
        parser.add_argument(
            "--format", choices=pooled_names(), default="", help="default: from the file name"
        )
        parser.add_argument(
            "--create", action="store_true", help="create the grading set if it does not exist"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        project = get_project(options["project"])
        depth = options["depth"]
        if depth is not None and depth < 1:
            raise bad_input(f"--depth must be a positive whole number, got {depth}.")
        name = options["grading_set"]
        sets = GradingSet.objects.filter(project=project)
        set_id = parse_id(name)
        grading_set = sets.filter(name=name).first() or (sets.filter(pk=set_id).first() if set_id else None)
        if grading_set is None and not options["create"]:
            raise bad_input(f"No grading set {name!r} in project {project.slug} (use --create to make it).")
        limit = GradingSet._meta.get_field("name").max_length or 200
        if grading_set is None and len(name) > limit:
            raise bad_input(f"A grading set name has at most {limit} characters; this one has {len(name)}.")
        runs = []
        for path in options["files"]:
            fmt = detect_format(path, options["format"], kind="run")
            try:
                run = read_run(read_bytes(path), fmt, default_name=path.rsplit("/", 1)[-1])
            except ImportFileError as error:
                raise file_error(path, error) from None
            self.stderr.write(f"{path}: {run.rows} ranked lines ({fmt}).")
            runs.append((path, run))
        pairs = pool_top_k(runs, depth)
        created = grading_set is None
        try:
            # The new set too: a refused import must not leave an empty set behind.
            with transaction.atomic():
                if grading_set is None:
                    grading_set = GradingSet.objects.create(project=project, name=name)
                summary = candidates_add(grading_set=grading_set, pairs=pairs, by=None, depth=depth)
        except ImportFileError as error:
            raise file_error(", ".join(options["files"]), error) from None
        except GradingError as error:
            raise bad_input(str(error)) from None
        if created:  # said once it is so: a refused import leaves no set
            self.stderr.write(f"Created grading set {name!r}.")
        self.stdout.write(
            self.style.SUCCESS(
                f"{grading_set.name}: added {summary.added} candidates, {summary.already} already there "
                f"({counted(summary.queries, 'query', 'queries')}; runs: {', '.join(summary.runs) or '-'})."
            )
        )
