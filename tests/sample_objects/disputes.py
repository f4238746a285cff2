"""Sample URL kwargs for the disputes views (see tests/samples.py)."""

from typing import Any

from annotator.models import Project


def sample_kwargs(project: Project) -> dict[str, Any]:
    return {}
