from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AnnotatorConfig(AppConfig):
    name = "annotator"
    verbose_name = _("Annotation")
