"""Sections that other apps add to a project's overview page.

`annotator` never imports the `evaluation` app (the dependency rule), so the evaluation app adds its
latest comparisons here from its AppConfig.ready(). A section returns context entries for the page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from annotator.models import Membership, Project

Section = Callable[[Project, Membership], dict[str, Any]]
SECTIONS: list[Section] = []


def overview_section(section: Section) -> Section:
    """Register `section`; the overview calls it for every member who opens the page."""
    SECTIONS.append(section)
    return section


def sections_context(project: Project, membership: Membership) -> dict[str, Any]:
    context: dict[str, Any] = {}
    for section in SECTIONS:
        context.update(section(project, membership))
    return context
