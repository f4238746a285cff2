"""`manage.py create_user USERNAME`: an account a project owner can then add on the Members page.

The account starts without a usable password; `manage.py changepassword USERNAME` sets one (it
asks twice, never on the command line, where shell history would keep it).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandParser

from annotator.management.commands._grading_import import bad_input


def create_account(username: str, command: BaseCommand, email: str = "") -> User:
    model: type[User] = get_user_model()  # type: ignore[assignment]  # the project uses Django's User
    if model.objects.filter(username=username).exists():
        raise bad_input(f"A user {username!r} exists already.")
    user = model(username=username, email=email)
    try:
        user.full_clean(exclude=["password"])
    except ValidationError as error:
        problems = "; ".join(
            f"{field}: {' '.join(messages)}" for field, messages in error.message_dict.items()
        )
        raise bad_input(f"Cannot create user {username!r}: {problems}") from None
    user.set_unusable_password()
    user.save()
    command.stdout.write(
        f"Created user {username!r}. Set a password with: python manage.py changepassword {username}"
    )
    return user


class Command(BaseCommand):
    help = "Create a user account (no project role yet: an owner adds it on the Members page)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        create_account(options["username"], self, options["email"])
