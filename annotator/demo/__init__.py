"""The demo, feature by feature: each module's `build(ctx)` adds that feature's seed data.

Order matters (grading -> disputes -> pools -> comparisons) and every step must be idempotent:
`manage.py demo` may run many times against the same database.

Fixed IDs so every step can find what the one before made:
- project slug `help-center-demo`; users `owner`, `reviewer`, `editor-a`, `editor-b`.
- query `q1`: the seeds' phone-number question; documents `A`..`E` (grades A3 B2 C1 D0 E0);
  grading set "Phone number change" -> pool "Phone number change".
- query `q2`: the seed 000 example; documents `J-A`..`J-D` (grades 3 2 1 0);
  grading set "Seed 000" -> pool "Seed 000".
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
