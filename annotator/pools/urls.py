"""URLs of the pools pages, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path

from annotator.pools import export_views
from annotator.pools import views as pools

version = "pools/<id:pool_id>/versions/<id:version_id>/"

urlpatterns = [
    path("pools/", pools.pool_list, name="pool_list"),
    path("pools/import/", pools.pool_import_page, name="pool_import"),
    path("pools/freeze/<id:set_id>/", pools.pool_freeze_page, name="pool_freeze"),
    path("pools/<id:pool_id>/", pools.pool_detail, name="pool_detail"),
    path(version, pools.pool_version_detail, name="pool_version_detail"),
    path(version + "export/", export_views.pool_version_export, name="pool_version_export"),
    path(version + "export/start/", export_views.pool_version_export_start, name="pool_version_export_start"),
    path(version + "manifest.json", pools.pool_version_manifest, name="pool_version_manifest"),
    path(version + "new-version/", pools.pool_version_continue, name="pool_version_continue"),
    path(version + "diff/<id:other_id>/", pools.pool_version_diff, name="pool_version_diff"),
]
