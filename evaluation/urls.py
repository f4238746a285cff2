"""URLs of runs and comparisons, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path

from evaluation import export_views, views

comparison = "comparisons/<id:comparison_id>/"

urlpatterns = [
    path("runs/", views.run_list, name="run_list"),
    path("runs/upload/", views.run_upload_page, name="run_upload"),
    path("runs/<id:run_id>/", views.run_detail, name="run_detail"),
    path("runs/<id:run_id>/download/", views.run_download, name="run_download"),
    path("runs/<id:run_id>/delete/", views.run_delete, name="run_delete"),
    path("comparisons/", views.comparison_list, name="comparison_list"),
    path("comparisons/new/", views.comparison_create_page, name="comparison_create"),
    path(comparison, views.comparison_detail, name="comparison_detail"),
    # The query ID travels as ?query=: pool query IDs are free text (slashes, spaces, Chinese).
    path(comparison + "query/", views.comparison_query, name="comparison_query"),
    path(comparison + "export.zip", export_views.comparison_export_download, name="comparison_export"),
    path(comparison + "export/start/", export_views.comparison_export_start, name="comparison_export_start"),
    path(comparison + "verify/", views.comparison_verify, name="comparison_verify"),
]
