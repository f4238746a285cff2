"""Sample URL kwargs for the jobs views (see tests/samples.py)."""

from typing import Any

from annotator.models import Job, JobState, Membership, Project, Role


def sample_kwargs(project: Project) -> dict[str, Any]:
    owner = Membership.objects.filter(project=project, role=Role.OWNER).select_related("user").first()
    assert owner is not None, f"sample project {project} needs an owner"
    job = Job.objects.create(
        project=project,
        kind="import_documents",
        started_by=owner.user,
        state=JobState.FAILED,
        params={"records": "documents", "format": "csv"},
        errors=["line 2: sample error"],
    )
    return {"job_id": job.pk}
