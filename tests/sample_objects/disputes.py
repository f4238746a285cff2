"""Sample URL kwargs for the disputes views (see tests/samples.py).

A dispute of `project` between its first two editors, waiting for a reviewer. In Alpha those are
Ed and Eve, so the access matrix's editor (Ed) is one of its editors and may open it.
"""

from typing import Any

from annotator.models import Candidate, GradingSet, Membership, Project, Role


def sample_kwargs(project: Project) -> dict[str, Any]:
    from tests.conftest import make_user
    from tests.factories import in_review

    # `set_id` and `candidate_id` are the grading area's kwargs too: its sample (made earlier)
    # wins when it made one, since the agreement page and the timeline suit any set or pair.
    had_set = GradingSet.objects.filter(project=project).exists()
    had_candidate = Candidate.objects.filter(grading_set__project=project).exists()
    editors = [
        m.user
        for m in Membership.objects.filter(project=project, role=Role.EDITOR)
        .select_related("user")
        .order_by("pk")
    ]
    while len(editors) < 2:
        user = make_user(f"disputes-sample-{project.slug}-{len(editors)}")
        Membership.objects.create(project=project, user=user, role=Role.EDITOR)
        editors.append(user)
    dispute = in_review(
        project,
        editors[0],
        editors[1],
        (2, 3),
        query="disputes-sample-q",
        document="disputes-sample-doc",
        set_name="Disputes sample set",
    )
    samples: dict[str, Any] = {"dispute_id": dispute.pk}
    if not had_set:
        samples["set_id"] = dispute.candidate.grading_set_id
    if not had_candidate:
        samples["candidate_id"] = dispute.candidate_id
    return samples
