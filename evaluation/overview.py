"""The latest comparisons on a project's overview, from the reviewer role up (they carry scores)."""

from __future__ import annotations

from typing import Any

from annotator.models import Membership, Permission, Project
from annotator.projects.overview import overview_section
from evaluation.models import Comparison


@overview_section
def latest_comparisons(project: Project, membership: Membership) -> dict[str, Any]:
    if not membership.may(Permission.VIEW_COMPARISONS):
        return {}
    return {"comparisons": Comparison.objects.in_project(project).listing().order_by("-created_at")[:5]}
