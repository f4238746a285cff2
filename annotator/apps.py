from django.apps import AppConfig
from django.urls import register_converter
from django.utils.translation import gettext_lazy as _


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = _("Annotation")

    def ready(self) -> None:
        from annotator.web.converters import IdConverter

        # Every URL module of both apps writes IDs as <id:...>; the URLconf loads after ready().
        register_converter(IdConverter, "id")
