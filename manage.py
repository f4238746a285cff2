#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main() -> None:
    if sys.argv[1:2] == ["evaluate"]:
        # The scoring command needs no database and no app: it starts without Django's setup
        # (see evaluation/cli.py), unless an option only Django's own parser knows is given.
        from evaluation import cli

        if not cli.uses_django_options(sys.argv[2:]):
            cli.main(sys.argv[2:])
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotator.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
