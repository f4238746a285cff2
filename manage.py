#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["evaluate"]:
        # The scoring command needs no database and no app: it starts without Django's setup
        # (see evaluation/cli.py), and returns here only when an option of Django's own is given.
        from evaluation import cli

        cli.main(sys.argv[2:])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
