"""URLs of grading sets, candidates and grading, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path

from annotator.grading import grade_views as grade
from annotator.grading import views as grading

urlpatterns = [
    # Grading sets and their candidates
    path("sets/", grading.grading_set_list, name="grading_set_list"),
    path("sets/new/", grading.grading_set_create, name="grading_set_create"),
    path("sets/<id:set_id>/", grading.grading_set_detail, name="grading_set_detail"),
    path("sets/<id:set_id>/candidates/add/", grading.candidate_add, name="candidate_add"),
    path(
        "sets/<id:set_id>/candidates/<id:candidate_id>/remove/",
        grading.candidate_remove,
        name="candidate_remove",
    ),
    # Grading
    path("grading/", grading.grading_queue, name="grading_queue"),
    path("grading/next/", grading.grading_next, name="grading_next"),
    path("grading/recheck/", grading.stale_list, name="stale_list"),
    path("sets/<id:set_id>/queries/<id:query_id>/grade/", grade.grade_page, name="grade_page"),
    path("sets/<id:set_id>/queries/<id:query_id>/undo/", grade.grade_undo, name="grade_undo"),
    path("sets/<id:set_id>/candidates/<id:candidate_id>/grade/", grade.grade_save, name="grade_save"),
]
