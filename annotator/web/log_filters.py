"""Filters for the project's log handlers (settings.LOGGING)."""

from __future__ import annotations

import logging


class OneLineForbidden(logging.Filter):
    """A refused request (403: a role the user lacks) is routine: Django logs it with the whole
    PermissionDenied traceback, which makes real tracebacks hard to find in the log. Kept as
    its one line, "Forbidden (Permission denied): /path"."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) == 403:
            record.exc_info = None
            record.exc_text = None
        return True
