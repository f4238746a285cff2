"""`manage.py create_project SLUG NAME --owner USERNAME`: a new project and its first owner.

Everything else is done in the app by that owner (members, criteria, imports). Accounts come
from `manage.py create_user` (or Django's admin); `--create-owner` makes the owner's account too.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from annotator.management.commands._grading_import import bad_input
from annotator.management.commands.create_user import create_account
from annotator.projects.services import ProjectCreateError, project_create


class Command(BaseCommand):
    help = "Create a project with its first owner (who then adds members and data in the app)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "slug", help="short ID in the project's address, /p/<slug>/ (letters, digits, - and _)"
        )
        parser.add_argument("name", help="the project's name")
        parser.add_argument("--owner", required=True, help="username of the first owner")
        parser.add_argument(
            "--create-owner", action="store_true", help="create the owner's account if it is missing"
        )
        parser.add_argument("--name-zh", default="", help="the name shown in the Chinese interface")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--content-language",
            default="",
            help="language tag of the queries and documents, e.g. zh-Hans (pages mark their text with it for "
            "screen readers); leave out when they are in several languages",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        username = options["owner"]
        owner = get_user_model().objects.filter(username=username, is_active=True).first()
        if owner is None and options["create_owner"]:
            owner = create_account(username, self)
        if owner is None:
            raise bad_input(
                f"No active user {username!r}: create it with `manage.py create_user {username}` "
                "or add --create-owner."
            )
        try:
            project = project_create(
                slug=options["slug"],
                name=options["name"],
                owner=owner,
                name_zh_hans=options["name_zh"],
                description=options["description"],
                content_language=options["content_language"],
            )
        except ProjectCreateError as error:
            raise bad_input(str(error)) from None
        self.stdout.write(
            self.style.SUCCESS(
                f"Created project {project.name!r} at /p/{project.slug}/ with owner {owner.get_username()}."
            )
        )
