"""The one task the worker runs: a job, by ID (django.tasks carries only JSON arguments)."""

from django.tasks import task

from annotator.jobs.runner import job_run


@task()
def run_job(job_id: int) -> None:
    job_run(job_id, in_worker=True)
