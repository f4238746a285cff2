"""URLs of runs and comparisons, included under /p/<slug>/ by annotator/urls.py."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
