from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from django.views.i18n import set_language

from annotator.disputes import urls as urls_disputes
from annotator.documents import urls as urls_documents
from annotator.grading import urls as urls_grading
from annotator.jobs import urls as urls_jobs
from annotator.pools import urls as urls_pools
from annotator.projects import accounts
from annotator.projects import urls as urls_projects
from annotator.projects import views as projects
from annotator.web.access import public
from evaluation import urls as evaluation_urls

project_patterns = [
    *urls_projects.urlpatterns,
    *urls_documents.urlpatterns,
    *urls_grading.urlpatterns,
    *urls_disputes.urlpatterns,
    *urls_pools.urlpatterns,
    *urls_jobs.urlpatterns,
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
    path("accounts/password/", accounts.password_change, name="password_change"),
    path("accounts/password/changed/", accounts.password_change_done, name="password_change_done"),
    path("accounts/password/reset/", accounts.password_reset, name="password_reset"),
    path("accounts/password/reset/sent/", accounts.password_reset_done, name="password_reset_done"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        accounts.password_reset_confirm,
        name="password_reset_confirm",
    ),
    path("accounts/password/reset/done/", accounts.password_reset_complete, name="password_reset_complete"),
    path("i18n/setlang/", public(set_language), name="set_language"),
    path("admin/", admin.site.urls),
    path("help/", include("annotator.help.urls")),
    path("p/<slug:slug>/", include(project_patterns)),
]

# A database that cannot be reached answers 503 even when it fails outside any view (a
# middleware loading the session or the user); anything else, templates/500.html.
handler500 = "annotator.web.outage.server_error"
