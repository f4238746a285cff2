"""`manage.py evaluate`, as a Django command: for `call_command` and for the options Django adds
to every command. A plain `manage.py evaluate ...` from the shell starts without Django's setup
and runs `evaluation.cli.main`; both take the arguments of `evaluation.cli.add_arguments` and
print `evaluation.cli.report`, so they cannot drift apart.
"""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation import cli
from evaluation.metrics import EvaluationError


class Command(BaseCommand):
    help = cli.HELP
    # Nothing here touches the database or the app's models: skip the system checks, they cost
    # startup time on every call.
    requires_system_checks: list[str] = []

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)

        def one_line_error(message: str) -> None:
            # argparse prints the usage too; bad input gets exactly one line and status 2.
            if parser.called_from_command_line:
                cli.fail(message)
            raise CommandError(message, returncode=2)

        parser.error = one_line_error  # type: ignore[method-assign]
        return parser

    def add_arguments(self, parser: ArgumentParser) -> None:
        cli.add_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = cli.report(options)
        except EvaluationError as error:
            raise CommandError(str(error), returncode=2) from error
        self.stdout.ending = ""  # the report ends its own lines
        if getattr(self, "_called_from_command_line", False):
            # Started with stdout closed (`>&-`), Django wraps the None Python leaves: the same one
            # line and status 2 as the shell path, not an AttributeError traceback.
            out = self.stdout if getattr(self.stdout, "_out", None) is not None else None
            cli.write_and_exit(report, out)  # type: ignore[arg-type]  # an OutputWrapper writes text
        try:
            self.stdout.write(report)
            self.stdout.flush()
        except OSError as error:  # a full disk, a closed or read-only target: one line, not a traceback
            raise CommandError(f"cannot write the report: {error.strerror or error}", returncode=2) from error
