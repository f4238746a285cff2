"""URLs of a project's overview, settings and members, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path

from annotator.projects import views as projects

urlpatterns = [
    path("", projects.project_detail, name="project_detail"),
    path("settings/", projects.project_settings, name="project_settings"),
    path("members/", projects.member_list, name="member_list"),
    path("members/<id:membership_id>/role/", projects.member_update, name="member_update"),
    path("members/<id:membership_id>/remove/", projects.member_remove, name="member_remove"),
]
