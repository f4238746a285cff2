"""Path converters shared by every URL pattern."""

from __future__ import annotations

import re

# The largest primary key a 64-bit signed integer column holds (PostgreSQL bigint, SQLite INTEGER).
MAX_ID = 2**63 - 1


def parse_id(text: str) -> int | None:
    """A database ID typed into a form or a command, or None: str.isdigit() also takes "²" and
    Arabic-Indic digits (int() then raises), and a 20-digit number fits no ID column."""
    if not re.fullmatch(IdConverter.regex, text):
        return None
    number = int(text)
    return number if number <= MAX_ID else None


class IdConverter:
    """A database ID in a URL. Like Django's `int`, but a number no ID column can hold is no match
    (so a 404), instead of reaching the database, where SQLite raises OverflowError (a 500)."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > MAX_ID:
            raise ValueError(value)  # the resolver treats ValueError as "no match"
        return number

    def to_url(self, value: int) -> str:
        return str(value)
