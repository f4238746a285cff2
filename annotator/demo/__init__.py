"""The demo, feature by feature: each module's `build(ctx)` adds that feature's seed data.

In order (grading -> disputes -> pools -> comparisons), each step idempotent (`manage.py demo` may
run again on the same database) and finding what the one before made by fixed IDs and names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.contrib.auth.models import User

from annotator.models import Project


@dataclass
class DemoContext:
    project: Project
    users: Mapping[str, User]  # by username (read-only: the demo steps only look users up)
