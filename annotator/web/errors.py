"""Engine errors in the reader's language, located in their run, file and line.

`evaluation.metrics` is Django-free: its errors carry an English template and the values, and
they are translated here through the project's catalog.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from evaluation import metrics


def describe_error(error: metrics.EvaluationError, *, run: str | None = None) -> str:
    """The engine's one-line error, prefixed (in the UI language) with the run, file and line.

    The engine's sentence comes as an English template with its values (it is a Django-free
    library); the template is translated here through the project's catalog, and so is the part
    that points into the user's own file.
    """
    # The separator is translated too: Chinese uses "，" (an ASCII comma read as a typo there).
    separator = pgettext("list separator", ", ")

    def show(value: object) -> object:
        if isinstance(value, metrics.Listed):
            items = [repr(_Quoted(v)) if isinstance(v, str) else str(v) for v in value]
            return separator.join(items + (["…"] if value.more else []))
        return _Quoted(value) if isinstance(value, str) else value

    return located(error.translated(_, show=show), run=run, file=error.source, line=error.line)


def located(problem: str, *, run: str | None = None, file: str | None = None, line: int | None = None) -> str:
    """`problem` prefixed (in the UI language) with where it is: "run “R”, file F, line N: ..."."""
    where: list[str] = []
    if run:
        where.append(_("run “%(name)s”") % {"name": run})
    if file:
        where.append(_("file %(file)s") % {"file": file})
    if line is not None:
        where.append(_("line %(line)s") % {"line": line})
    if not where:
        return problem
    return _("%(where)s: %(problem)s") % {
        "where": pgettext("list separator", ", ").join(where),
        "problem": problem,
    }


class _Quoted(str):
    """A value as a page quotes it: the engine's %r gives 'q1' (a command line's quotes); here it
    gives “q1”, the quotes of every other message in both languages, with repr's escapes kept so
    a tab or a trailing space in an ID still shows."""

    def __repr__(self) -> str:
        return f"“{str.__repr__(self)[1:-1]}”"
