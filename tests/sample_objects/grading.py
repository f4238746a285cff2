"""Sample URL kwargs for the grading views (see tests/samples.py)."""

from typing import Any

from annotator.models import Candidate, CandidateSource, Document, GradingSet, Project, Query


def sample_kwargs(project: Project) -> dict[str, Any]:
    """A document, a query, a grading set and one candidate pair, all of `project`."""
    document, _ = Document.upsert(
        project=project, external_id="sample-doc", title="Sample document", body="A body to grade."
    )
    query, _ = Query.objects.get_or_create(
        project=project,
        external_id="sample-q",
        defaults={"text": "A sample question?", "information_need": "x"},
    )
    grading_set, _ = GradingSet.objects.get_or_create(project=project, name="Sample set")
    candidate, _ = Candidate.objects.get_or_create(
        grading_set=grading_set, query=query, document=document, defaults={"source": CandidateSource.MANUAL}
    )
    return {
        "document_id": document.pk,
        "query_id": query.pk,
        "set_id": grading_set.pk,
        "candidate_id": candidate.pk,
    }
