"""URLs of the jobs pages, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path

from annotator.jobs import views as jobs

urlpatterns = [
    path("jobs/", jobs.job_list, name="job_list"),
    path("jobs/<id:job_id>/", jobs.job_detail, name="job_detail"),
    path("jobs/<id:job_id>/cancel/", jobs.job_cancel_view, name="job_cancel"),
    path("jobs/<id:job_id>/download/", jobs.job_download, name="job_download"),
]
