"""Sample URL kwargs for the jobs views (see tests/samples.py): a done export, which has a file."""

from typing import Any

from annotator.models import Job, JobState, Membership, PoolVersion, Project, Role


def sample_kwargs(project: Project) -> dict[str, Any]:
    owner = Membership.objects.filter(project=project, role=Role.OWNER).select_related("user").first()
    assert owner is not None, f"sample project {project} needs an owner"
    version = PoolVersion.objects.filter(pool__project=project).first()
    assert version is not None, "tests/sample_objects/pools.py makes a version first"
    job = Job.objects.create(
        project=project,
        kind="export_pool",
        started_by=owner.user,
        state=JobState.DONE,
        params={"version_id": version.pk, "format": "csv", "part": "", "spreadsheet": False},
        result={"pool_id": version.pool_id, "version_id": version.pk},
        output_name="sample-v1-csv.zip",
        output_size=4,
        output_data=b"PK\x05\x06",
    )
    return {"job_id": job.pk}
