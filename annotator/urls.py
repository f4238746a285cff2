from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.i18n import set_language

from annotator import urls_disputes, urls_grading, urls_pools
from annotator.access import public
from annotator.views import accounts, projects
from evaluation import urls as evaluation_urls

project_patterns = [
    path("", projects.project_detail, name="project_detail"),
    path("settings/", projects.project_settings, name="project_settings"),
    path("members/", projects.member_list, name="member_list"),
    path("members/<id:membership_id>/role/", projects.member_update, name="member_update"),
    path("members/<id:membership_id>/remove/", projects.member_remove, name="member_remove"),
    *urls_grading.urlpatterns,
    *urls_disputes.urlpatterns,
    *urls_pools.urlpatterns,
    *evaluation_urls.urlpatterns,
]

urlpatterns = [
    path("", projects.home, name="home"),
    path(
        "accounts/login/",
        public(auth_views.LoginView.as_view(redirect_authenticated_user=True)),
        name="login",
    ),
    path("accounts/logout/", accounts.logout_page, name="logout"),
    path("i18n/setlang/", public(set_language), name="set_language"),
    path("admin/", admin.site.urls),
    path("p/<slug:slug>/", include(project_patterns)),
]
