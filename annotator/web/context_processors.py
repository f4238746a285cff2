from typing import Any

from django.http import HttpRequest

from annotator.web.middleware import BUSY_MESSAGE


def project(request: HttpRequest) -> dict[str, Any]:
    """Expose the project and membership that `access.project_role` attached, for the navigation,
    and what the page's script says when the database is busy."""
    return {
        "busy_message": BUSY_MESSAGE,
        "project": getattr(request, "project", None),
        "membership": getattr(request, "membership", None),
    }
