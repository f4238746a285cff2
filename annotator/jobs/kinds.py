"""The kinds of job: what each runs, how its result reads, and where it leads. One entry per kind.

The annotator's kinds are registered here; the evaluation app registers its own (run uploads) in
its AppConfig.ready, since annotator never imports evaluation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from annotator.documents import jobs as documents_jobs
from annotator.jobs.models import Job
from annotator.jobs.services import Progress
from annotator.models import Permission
from annotator.pools import jobs as pools_jobs


@dataclass(frozen=True)
class Kind:
    label: Promise
    run: Callable[[Job, Progress], None]  # the body: it calls job_complete in its transaction
    describe: Callable[[Job], str]  # a done job's result, in a sentence
    result_url: Callable[[Job], str]
    unit: Promise  # what `done` and `total` count
    # Below this size (bytes of the file, or pairs) the job runs inside the request that starts it.
    inline_setting: str
    # Needed, beside seeing jobs, to download the file the job made (an export's data).
    output_permission: Permission | None = None


def output_url(job: Job) -> str:
    """A job that made a file leads to its download."""
    return reverse("job_download", kwargs={"slug": job.project.slug, "job_id": job.pk})


def register(name: str, kind: Kind) -> None:
    assert name not in KINDS, f"job kind {name} registered twice"
    KINDS[name] = kind


KINDS: dict[str, Kind] = {
    "import_documents": Kind(
        _("Document import"),
        documents_jobs.import_records,
        documents_jobs.describe,
        documents_jobs.result_url,
        _("documents"),
        "import",
    ),
    "import_queries": Kind(
        _("Query import"),
        documents_jobs.import_records,
        documents_jobs.describe,
        documents_jobs.result_url,
        _("queries"),
        "import",
    ),
    "pool_candidates": Kind(
        _("Candidates import"),
        documents_jobs.pool_candidates,
        documents_jobs.describe_candidates,
        documents_jobs.candidates_url,
        _("pairs"),
        "import",
    ),
    "freeze": Kind(
        _("Freeze"), pools_jobs.freeze, pools_jobs.describe, pools_jobs.result_url, _("pairs"), "freeze"
    ),
    "import_judgments": Kind(
        _("Judgments import"),
        pools_jobs.import_judgments,
        pools_jobs.describe_import,
        pools_jobs.result_url,
        _("judgments"),
        "import",
    ),
    "export_pool": Kind(
        _("Pool export"),
        pools_jobs.export,
        pools_jobs.describe_export,
        output_url,
        _("judgments"),
        "export",
        output_permission=Permission.VIEW_POOLS,
    ),
}
