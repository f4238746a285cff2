"""How far editors agree on raw grades (before any discussion or decision), per grading set.

The figures come from the pure `agreement` module; which grades a viewer may count is `queries`'.
Where a number would mislead (too few pairs, no variation), a sentence says why there is none.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from annotator.disputes import agreement
from annotator.disputes.queries import blind_pairs, counted_grades, incomplete_pairs, unfinished_pairs
from annotator.grading.models import count_of
from annotator.grading.settlement import idle_settle
from annotator.models import (
    Candidate,
    CandidateSource,
    Dispute,
    DisputeStatus,
    FinalGrade,
    Grade,
    GradingSet,
    Permission,
)
from annotator.web.access import ProjectRequest, project_permission
from annotator.web.paging import Paginator

PER_PAGE = 25

NOT_ENOUGH = {
    agreement.NO_PAIRS: gettext_lazy("Not enough data: no pair has grades from two editors yet."),
    agreement.ONE_PAIR: gettext_lazy("Not enough data: only one pair has grades from two editors."),
    agreement.TOO_FEW_ITEMS: gettext_lazy(
        "Not enough data: these two editors share fewer than two graded pairs."
    ),
    agreement.NO_VARIATION: gettext_lazy(
        "Not enough data: every grade involved is the same, so agreement cannot be told apart from chance."
    ),
    agreement.ONE_GRADE_EDITOR: gettext_lazy(
        "Not enough data: one of these editors gave the same grade to every pair they share, so agreement "
        "cannot be told apart from chance."
    ),
}


def _figure(fig: agreement.Figure) -> dict[str, Any]:
    """A figure for the template: its value, or the sentence that replaces a misleading number."""
    percent = fig.value * 100 if fig.value is not None else None
    return {"value": fig.value, "percent": percent, "n": fig.n, "note": NOT_ENOUGH.get(fig.reason, "")}


@project_permission(Permission.SEE_ALL_GRADES)
@require_GET
def agreement_index(request: ProjectRequest, slug: str) -> HttpResponse:
    sets = (
        GradingSet.objects.filter(project=request.project)
        # Counted in subqueries: COUNT(DISTINCT) over the join of pairs, grades and disputes read
        # every grade twice over (2.5 s → 0.4 s at a million grades, SQLite).
        .annotate(
            pairs=count_of(Candidate.objects.all(), "grading_set"),
            grade_count=count_of(Grade.objects.all(), "candidate__grading_set"),
            dispute_count=count_of(Dispute.objects.all(), "grading_set"),
        )
        .order_by("name")
    )
    # The sets that need a calibration talk first: lowest ordinal alpha on top (then lowest exact
    # agreement), sets without enough data last, each saying why. Only what the viewer may count,
    # as on each set's page; per set one read of its grades' three columns, counted in numpy.
    rows = []
    for grading_set in sets:
        triples = list(
            counted_grades(grading_set, request.user).values_list("candidate_id", "editor_id", "grade")
        )
        units, editors, grades = zip(*triples, strict=True) if triples else ((), (), ())
        table = agreement.Table.from_triples(units, editors, grades)
        exact, _within_one = agreement.percent_agreement(table)
        alpha = agreement.krippendorff_alpha_ordinal(table)
        grading_set.exact = _figure(exact)  # type: ignore[attr-defined]
        grading_set.alpha = _figure(alpha)  # type: ignore[attr-defined]
        rows.append(grading_set)
    rows.sort(
        key=lambda g: (
            g.alpha["value"] is None,  # type: ignore[attr-defined]
            g.alpha["value"] if g.alpha["value"] is not None else 0.0,  # type: ignore[attr-defined]
            g.exact["value"] if g.exact["value"] is not None else 1.0,  # type: ignore[attr-defined]
            g.name,
        )
    )
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    template = "annotator/disputes/agreement_index.html" + ("#agreement-table" if request.htmx else "")
    return render(request, template, {"page": page})


@project_permission(Permission.SEE_ALL_GRADES)
@require_GET
def agreement_detail(request: ProjectRequest, slug: str, set_id: int) -> HttpResponse:
    """Agreement on raw grades (before any discussion or decision) for one grading set."""
    grading_set = get_object_or_404(GradingSet, pk=set_id, project=request.project)
    # Idle queries settle first; a query its editor is still on stays "still being graded" (its
    # pairs are unfinished: queries.py), so no figure counts a grade that may still change.
    idle_settle(grading_set=grading_set)
    # Only what the timeline would show the viewer is counted (queries.py): a confusion matrix or a
    # severity count would otherwise give them grades they must not see yet.
    unfinished = unfinished_pairs(grading_set)
    incomplete = incomplete_pairs(grading_set)
    blind = blind_pairs(grading_set, request.user)
    rows = list(counted_grades(grading_set, request.user))
    # Columns, not a dict per pair: 13 s → 5.5 s at a million grades (SQLite); texts and names are
    # read once per query and editor, not once per grade.
    units, editors, grades, query_of = zip(*rows, strict=True) if rows else ((), (), (), ())
    table = agreement.Table.from_triples(units, editors, grades)
    report = agreement.agreement_report(table, dict(zip(units, query_of, strict=True)))
    # The set's queries by a subquery, not an ID list: SQLite refuses a list of 32,767 IDs.
    queries = {
        pk: (external_id, text)
        for pk, external_id, text in grading_set.queries().values_list("pk", "external_id", "text")
    }
    names = dict(get_user_model().objects.filter(pk__in=table.raters).values_list("pk", "username"))

    # Ambiguous queries first: lowest alpha on top, queries without a figure last.
    by_query = sorted(
        report.alpha_by_group,
        key=lambda item: (not item[1].available, item[1].value or 0.0, queries[item[0]][0]),
    )
    query_rows = [
        {"external_id": queries[q][0], "text": queries[q][1], "alpha": _figure(fig)} for q, fig in by_query
    ]
    query_page = Paginator(query_rows, PER_PAGE).get_page(request.GET.get("qpage"))
    pairs = [
        {
            "a": names[p.rater_a],
            "b": names[p.rater_b],
            "shared": p.shared,
            "exact": _figure(p.exact),
            "within_one": _figure(p.within_one),
            "kappa": _figure(p.kappa),
            "matrix": list(zip(range(4), p.confusion, strict=True)),
        }
        for p in report.pairs
    ]
    counts = {
        (row["status"], row["severity"]): row["n"]
        for row in Dispute.objects.filter(grading_set=grading_set)
        .exclude(candidate_id__in=blind)  # incomplete pairs have no dispute
        .values("status", "severity")
        .annotate(n=Count("pk"))
        .order_by()
    }
    dispute_table = [
        {
            "status": label,
            "by_severity": [counts.get((value, s), 0) for s in (1, 2, 3)],
            "total": sum(counts.get((value, s), 0) for s in (1, 2, 3)),
        }
        for value, label in DisputeStatus.choices
    ]
    context = {
        "grading_set": grading_set,
        "report": report,
        "exact": _figure(report.exact),
        "within_one": _figure(report.within_one),
        "alpha": _figure(report.alpha),
        "pairs": pairs,
        "query_page": query_page,
        "dispute_table": dispute_table,
        "dispute_total": sum(counts.values()),
        "severity_totals": [sum(counts.get((v, s), 0) for v in DisputeStatus.values) for s in (1, 2, 3)],
        "settled_count": FinalGrade.objects.filter(candidate__grading_set=grading_set).count(),
        "blind_count": blind.count(),
        "incomplete_count": incomplete.count(),
        # Counted in: the viewer's own are among the blind ones, so no pair is named by both notes.
        "unfinished_count": 0 if grading_set.is_open else unfinished.exclude(pk__in=blind).count(),
        # Copied from a frozen version with their final grades, without raw grades: nothing to
        # measure agreement on; counted, so the page says why they are left out.
        "copied_count": grading_set.candidates.filter(
            source=CandidateSource.COPIED, grades__isnull=True
        ).count(),
    }
    template = "annotator/disputes/agreement.html" + ("#query-alpha" if request.htmx else "")
    return render(request, template, context)
