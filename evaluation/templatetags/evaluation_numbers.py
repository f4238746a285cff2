"""Number display for the comparison pages: 4 decimals on the page, full precision on hover.

The values are the engine's floats, passed through untouched; these tags only format them.
`repr` is the shortest text that reads back to the same float, i.e. full precision.
"""

from __future__ import annotations

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy

register = template.Library()


@register.filter
def full(value: object) -> str:
    """Full precision of a float (the exact value stored and exported); "" for None."""
    if value is None:
        return ""
    return (
        repr(float(value)) if isinstance(value, int | float) and not isinstance(value, bool) else str(value)
    )


@register.simple_tag
def num(value: object, digits: int = 4, signed: bool = False) -> str:
    """<span title="full precision">rounded</span>; an em dash for None (an excluded query)."""
    if value is None:
        return mark_safe('<span class="muted">—</span>')  # a constant: nothing to escape
    number = float(value)  # type: ignore[arg-type]
    shown = f"{number:+.{digits}f}" if signed else f"{number:.{digits}f}"
    return format_html('<span class="num" title="{}">{}</span>', repr(number), shown)


# Short names for a gain inside a sentence ("K = 5, linear gain"); the form shows the long labels.
_GAIN_NAMES = {"linear": gettext_lazy("linear"), "exponential": gettext_lazy("exponential")}


@register.filter
def gain_name(value: str) -> str:
    """The gain's short name in the reader's language (the stored code is English)."""
    return str(_GAIN_NAMES.get(value, value))
