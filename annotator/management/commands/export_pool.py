"""`manage.py export_pool`: a frozen pool version and its manifest, as the web page's download.

Bad input is one error line and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotator.models import Pool, PoolVersion
from annotator.pools.files import (
    EXPORT_FORMATS,
    PoolExportError,
    export_data,
    export_manifest,
    export_zip,
)
from evaluation.formats.registry import detect_format, qrels_name


def fail(message: str) -> CommandError:
    return CommandError(message, returncode=2)


class Command(BaseCommand):
    help = "Export a frozen pool version as TREC qrels, CSV or JSONL, with its manifest."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("project", help="project slug")
        parser.add_argument("pool", help="pool name")
        parser.add_argument("--number", type=int, help="version number (default: the newest)")
        parser.add_argument(
            "--format",
            help=(
                f"one of {', '.join(EXPORT_FORMATS)} "
                "(default: from the --output name, .csv or .jsonl; else qrels)"
            ),
        )
        parser.add_argument("--output", help="file to write (NAME.zip: data + manifest.json); default stdout")

    def handle(self, *args: Any, **options: Any) -> None:
        # Without --format the output's name decides, as it does for import_pool: out.csv is CSV.
        output_name = (options["output"] or "").removesuffix(".zip")
        fmt = options["format"] or qrels_name(detect_format(output_name, kind="qrels"))
        if fmt not in EXPORT_FORMATS:
            raise fail(f"unknown format {fmt!r}; allowed: {', '.join(EXPORT_FORMATS)}")
        pool = Pool.objects.filter(project__slug=options["project"], name=options["pool"]).first()
        if pool is None:
            raise fail(f"no pool named {options['pool']!r} in project {options['project']!r}")
        versions = PoolVersion.objects.filter(pool=pool).select_related("pool__project", "frozen_by")
        number = options["number"]
        version = (
            versions.order_by("-number").first() if number is None else versions.filter(number=number).first()
        )
        if version is None:
            raise fail(f"pool {pool.name!r} has no version {'' if number is None else number}".rstrip())
        problems = version.integrity_problems()
        if problems:
            raise fail(f"{version} failed its integrity check, refusing to export: {' '.join(problems)}")
        output = options["output"]
        if output:
            # Checked before anything is written, so a bad path never leaves half an export behind.
            for target in (Path(output), Path(f"{output}.manifest.json")):
                if target.is_dir():
                    raise fail(f"cannot write {target}: it is a folder")
            if not Path(output).parent.is_dir():
                raise fail(f"cannot write {output}: folder {Path(output).parent} does not exist")
        try:
            if output and output.endswith(".zip"):
                _, payload = export_zip(version, fmt)
                Path(output).write_bytes(payload)
                self.stderr.write(f"wrote {output} ({version}, sha256 {version.sha256})")
                return
            name, text = export_data(version, fmt)
        except PoolExportError as exc:
            raise fail(str(exc)) from exc
        except OSError as exc:  # e.g. no permission to write there
            raise fail(f"cannot write {exc.filename or output}: {exc.strerror or exc}") from exc
        if not output:
            self.stdout.write(text, ending="")
            return
        data = text.encode("utf-8")
        manifest = export_manifest(version, fmt, Path(output).name, data)
        try:
            Path(output).write_bytes(data)
            Path(f"{output}.manifest.json").write_text(
                json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
            )
        except OSError as exc:
            raise fail(f"cannot write {exc.filename or output}: {exc.strerror or exc}") from exc
        self.stderr.write(f"wrote {output} and {output}.manifest.json ({version}, sha256 {version.sha256})")
