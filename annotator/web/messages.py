"""Django's own messages that read badly in Simplified Chinese, given our wording.

The project's catalog (annotator/locale) takes precedence over Django's (django/conf/locale), so
marking a Django msgid here keeps it in our catalog (`make messages` extracts this file) with our
translation. Nothing imports this module: it only exists to be extracted.

- ":" is the form label suffix: Django's catalog keeps the ASCII colon ("理由:"); ours gives "：".
- The length validators say "变量" (a programming variable) and use half-width brackets.
- Django 6.1's empty choice of a select ("- Select an option -") has no Chinese yet.
"""

from django.utils.translation import gettext_noop, ngettext_lazy

LABEL_SUFFIX = gettext_noop(":")
BLANK_CHOICE = gettext_noop("- Select an option -")
MAX_LENGTH = ngettext_lazy(
    "Ensure this value has at most %(limit_value)d character (it has %(show_value)d).",
    "Ensure this value has at most %(limit_value)d characters (it has %(show_value)d).",
    "limit_value",
)
MIN_LENGTH = ngettext_lazy(
    "Ensure this value has at least %(limit_value)d character (it has %(show_value)d).",
    "Ensure this value has at least %(limit_value)d characters (it has %(show_value)d).",
    "limit_value",
)
