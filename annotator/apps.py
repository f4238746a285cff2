from typing import Any

from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate
from django.urls import register_converter
from django.utils.translation import gettext_lazy as _


def _reinstall_counter_triggers(sender: AppConfig, using: str, **kwargs: Any) -> None:
    """After every migrate, the grading counters' triggers are created again (counters.install):
    SQLite rebuilds a table to alter it, and the rebuild drops the triggers on that table."""
    from annotator.grading import counters

    connection = connections[using]
    tables = set(connection.introspection.table_names())
    if {"annotator_candidate", "annotator_editorprogress", "annotator_dispute"} <= tables:
        counters.install(connection)


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = _("Annotation")

    def ready(self) -> None:
        from annotator.web.converters import IdConverter

        # Every URL module of both apps writes IDs as <id:...>; the URLconf loads after ready().
        register_converter(IdConverter, "id")
        post_migrate.connect(_reinstall_counter_triggers, sender=self)
