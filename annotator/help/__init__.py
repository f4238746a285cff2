"""The user manual, served in the app at /help/ (the Markdown sources are templates/docs/<lang>/).

`manage.py render_docs` turns each `<page>.md` into the committed `<page>.html-fragment` beside it;
the views only read those fragments, so serving the manual needs no Markdown package.
"""

from django.conf import settings
from django.utils.translation import gettext_lazy as _

DOCS_DIR = settings.BASE_DIR / "templates" / "docs"
# The source folders, one per UI language; any language without its own folder reads English.
LANGUAGES = ("en", "zh_Hans")

# (slug, title) in the order of the help pages' menu; "index" is the page at /help/ itself.
PAGES = (
    ("index", _("Help")),
    ("grading", _("Grading")),
    ("imports", _("Imports")),
    ("disputes", _("Disputes and agreement")),
    ("pools", _("Judgment pools")),
    ("comparisons", _("Comparing systems")),
    ("roles", _("Roles and members")),
)
