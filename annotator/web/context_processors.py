from typing import Any

from django.http import HttpRequest

from annotator.web.middleware import BUSY_MESSAGE


def project(request: HttpRequest) -> dict[str, Any]:
    """Expose the project and membership that `access.project_permission` attached, for the
    navigation; `may`, what the member may do (`{% if "freeze" in may %}`; not `perms`, which is
    Django's); and what the page's script says when the database is busy."""
    membership = getattr(request, "membership", None)
    return {
        "busy_message": BUSY_MESSAGE,
        "project": getattr(request, "project", None),
        "membership": membership,
        "may": membership.permissions if membership is not None else frozenset(),
    }
