"""Django's own messages that read badly in Simplified Chinese, given our wording.

Our catalog takes precedence over Django's, so a Django msgid marked here (`make messages`
extracts this file) gets our translation, e.g. "：" as the label suffix. Nothing imports it.
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
