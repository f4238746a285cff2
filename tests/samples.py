"""Sample URL arguments for the access-matrix test.

Every URL kwarg of every project-scoped view needs a sample value here, built from objects of the
given project. A new view whose kwargs have no sample makes the access matrix fail, on purpose:
add the objects it needs below so the new view is checked like every other.
"""

from __future__ import annotations

from typing import Any

from annotator.models import Membership, Project, Role
from tests.sample_objects import disputes, evaluation, grading, jobs, pools


def sample_kwargs(project: Project) -> dict[str, Any]:
    """One existing object of `project` for each URL kwarg name used by the app's views."""
    editor_membership = Membership.objects.filter(project=project).exclude(role=Role.OWNER).first()
    if editor_membership is None:  # project Beta has only its owner: give it a second member
        from tests.conftest import make_user

        editor_membership = Membership.objects.create(
            project=project, user=make_user(f"sample-{project.slug}"), role=Role.EDITOR
        )
    # "page": a help page (annotator.help), the one URL kwarg that names no object.
    samples: dict[str, Any] = {"slug": project.slug, "membership_id": editor_membership.pk, "page": "grading"}
    # A password reset link's parts: a wrong pair answers the page that says the link no longer works.
    samples.update({"uidb64": "MA", "token": "not-a-token"})
    # Each area adds the kwargs of its own views, in its own module of tests/sample_objects/.
    for area in (grading, disputes, pools, evaluation, jobs):
        samples.update(area.sample_kwargs(project))
    return samples
