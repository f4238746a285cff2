from typing import Any

from django.http import HttpRequest


def project(request: HttpRequest) -> dict[str, Any]:
    """Expose the project and membership that `access.project_role` attached, for the navigation."""
    return {
        "project": getattr(request, "project", None),
        "membership": getattr(request, "membership", None),
    }
