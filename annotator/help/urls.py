"""URLs of the help pages, included under /help/ by annotator/urls.py."""

from django.urls import path

from annotator.help import views

urlpatterns = [
    path("", views.help_index, name="help_index"),
    path("<slug:page>/", views.help_page, name="help_page"),
]
