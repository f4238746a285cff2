"""URLs of documents, queries, criteria and imports, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path

from annotator.documents import views as documents

urlpatterns = [
    path("documents/", documents.document_list, name="document_list"),
    path("documents/<id:document_id>/", documents.document_detail, name="document_detail"),
    path("queries/", documents.query_list, name="query_list"),
    path("criteria/", documents.criteria, name="criteria"),
    path("criteria/publish/", documents.criteria_publish, name="criteria_publish"),
    path("imports/", documents.import_page, name="import_page"),
    path("imports/documents/", documents.import_documents, name="import_documents"),
    path("imports/queries/", documents.import_queries, name="import_queries"),
    path("imports/candidates/", documents.import_candidates, name="import_candidates"),
]
