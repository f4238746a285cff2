"""Settings, policies and the one error type of the scoring contract.

Every result carries the `Settings` it was computed with, so a number is never separated from the
rules that produced it (gain, unjudged documents, zero IDCG, ties, missing and extra queries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Literal, get_args

import numpy as np

Gain = Literal["linear", "exponential"]
Unjudged = Literal["error", "zero"]
ZeroIdcg = Literal["zero", "exclude"]
Ties = Literal["error", "docid-desc", "docid-asc", "input-order", "expected"]
MissingQueries = Literal["zero", "error"]
ExtraQueries = Literal["error", "ignore"]

GAINS: tuple[Gain, ...] = get_args(Gain)
UNJUDGED: tuple[Unjudged, ...] = get_args(Unjudged)
ZERO_IDCG: tuple[ZeroIdcg, ...] = get_args(ZeroIdcg)
TIES: tuple[Ties, ...] = get_args(Ties)
MISSING_QUERIES: tuple[MissingQueries, ...] = get_args(MissingQueries)
EXTRA_QUERIES: tuple[ExtraQueries, ...] = get_args(ExtraQueries)

MIN_GRADE = 0
MAX_GRADE = 3
# "Relevant" for the binary metrics (recall, precision, RR, AP) is a grade at or above this
# threshold; 1 is trec_eval's default, 2 counts only "helpful" documents.
DEFAULT_RELEVANT = 1
# The largest seed a comparison can store (a signed 64-bit column), so a result from the command
# line can always be recorded and rerun in the app with the same seed.
MAX_SEED = 2**63 - 1


def gettext_noop(message: str) -> str:
    """Marks an error template for the web app's message catalog (Django's `makemessages` looks
    for this name). The engine itself reports in English and translates nothing: the template and
    its parameters travel with the error, and a caller with a catalog translates the template."""
    return message


# How much of one value a message quotes: a whole 1 MB line, or a CSV row of 500,000 fields, would
# make the error page megabytes long. The attributes (query, doc_id) keep whole values.
MAX_QUOTED_CHARS = 300
MAX_QUOTED_ITEMS = 20


def _quoted(value: object) -> object:
    if isinstance(value, str) and len(value) > MAX_QUOTED_CHARS:
        return value[:MAX_QUOTED_CHARS] + "…"
    if isinstance(value, list | tuple):
        items = [_quoted(item) for item in value[:MAX_QUOTED_ITEMS]]
        if len(value) > MAX_QUOTED_ITEMS:
            items.append(f"… {len(value) - MAX_QUOTED_ITEMS} more")
        if isinstance(value, Listed):
            return Listed(items, more=value.more)
        return type(value)(items) if isinstance(value, list) else tuple(items)
    return value


class Listed(tuple[object, ...]):
    """Values an error message lists (tied documents, their lines). In English, for the command
    line, they read 'A', 'B' (IDs quoted as %r quotes them) and `more` adds ", ..."; a page joins
    them in its own quotes and list separator (Chinese lists with "，", not ", ")."""

    more: bool

    def __new__(cls, values: Iterable[object], *, more: bool = False) -> Listed:
        listed = super().__new__(cls, values)
        listed.more = more
        return listed

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_listed, (tuple(self), self.more))

    def __str__(self) -> str:
        return ", ".join(repr(v) if isinstance(v, str) else str(v) for v in self) + (
            ", ..." if self.more else ""
        )


def _rebuild_listed(values: tuple[object, ...], more: bool) -> Listed:
    return Listed(values, more=more)


class EvaluationError(ValueError):
    """Bad input or a refused computation.

    The message is one line and names what is wrong: the query, the document ID and, for input
    read from a file, the file and the line. The parts are also kept as attributes so a web page
    can point at the offending row.

    `template` is the English text with %(name)s placeholders (marked with `gettext_noop`) and
    `params` fills them; `detail` is the filled-in English. `translated(gettext)` gives the same
    sentence in a catalog's language, so the engine stays free of any i18n framework.
    """

    def __init__(
        self,
        template: str,
        params: Mapping[str, object] | None = None,
        *,
        query: str | None = None,
        doc_id: str | None = None,
        source: str | None = None,
        line: int | None = None,
    ) -> None:
        self.template = template
        self.params = {key: _quoted(value) for key, value in params.items()} if params is not None else None
        self.query = query
        self.doc_id = doc_id
        self.source = source
        self.line = line
        self.detail = template if self.params is None else template % self.params
        where = ""
        if source is not None and line is not None:
            where = f"{source}, line {line}: "
        elif source is not None:
            where = f"{source}: "
        # One line, always: the command prints it as the single line of its stderr.
        super().__init__((where + self.detail).replace("\n", " "))

    def translated(
        self, gettext: Callable[[str], str], show: Callable[[object], object] | None = None
    ) -> str:
        """`detail` in the language of `gettext` (the English template's translation, filled in),
        each value passed through `show` first when given (a page quotes values its own way)."""
        text = gettext(self.template)
        if self.params is None:
            return text
        return text % (
            self.params if show is None else {key: show(value) for key, value in self.params.items()}
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments are not restored by the default exception pickling.
        return (
            _rebuild_error,
            (self.template, self.params, self.query, self.doc_id, self.source, self.line),
        )


def _rebuild_error(
    template: str,
    params: dict[str, object] | None,
    query: str | None,
    doc_id: str | None,
    source: str | None,
    line: int | None,
) -> EvaluationError:
    return EvaluationError(template, params, query=query, doc_id=doc_id, source=source, line=line)


def is_integer(value: object) -> bool:
    """True for int and numpy integers; False for bool, which Python counts as an int."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def validate_k(k: object) -> int:
    """K is a positive integer: 0, negatives, bools and non-integers (1.5, "10") are refused."""
    if not is_integer(k):
        raise EvaluationError(
            gettext_noop("K must be a positive integer, got %(k)r (%(type)s)"),
            {"k": k, "type": type(k).__name__},
        )
    if int(k) < 1:  # type: ignore[call-overload]
        raise EvaluationError(gettext_noop("K must be a positive integer, got %(k)r"), {"k": k})
    return int(k)  # type: ignore[call-overload]


def grade_error(
    grade: object, *, query: str, doc_id: str, source: str | None = None, line: int | None = None
) -> EvaluationError | None:
    """Why `grade` is not a valid grade (an int 0..3, not a bool), or None when it is one."""
    params = {"query": query, "doc": doc_id, "grade": grade, "low": MIN_GRADE, "high": MAX_GRADE}
    if is_integer(grade) and MIN_GRADE <= int(grade) <= MAX_GRADE:  # type: ignore[call-overload]
        return None
    if is_integer(grade):
        template = gettext_noop(
            "query %(query)r, document %(doc)r: grade must be an integer %(low)s..%(high)s, got %(grade)r"
        )
    else:
        template = gettext_noop(
            "query %(query)r, document %(doc)r: grade must be an integer %(low)s..%(high)s, got %(grade)r "
            "(%(type)s)"
        )
        params["type"] = type(grade).__name__
    return EvaluationError(template, params, query=query, doc_id=doc_id, source=source, line=line)


def validate_grade(grade: object, *, query: str, doc_id: str) -> int:
    error = grade_error(grade, query=query, doc_id=doc_id)
    if error is not None:
        raise error
    return int(grade)  # type: ignore[call-overload]


def _check_choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise EvaluationError(
            gettext_noop("%(name)s must be one of %(allowed)s; got %(value)r"),
            {"name": name, "allowed": ", ".join(allowed), "value": value},
        )


@dataclass(frozen=True)
class Settings:
    """Everything a score depends on besides the pool and the ranking.

    Two systems are only comparable under equal settings; `compare_results` refuses otherwise.
    `seed` drives the randomization test and the bootstrap of a comparison. `relevant` is the
    lowest grade the binary metrics count as relevant (1..3); NDCG does not depend on it.
    """

    k: int = 10
    gain: Gain = "linear"
    unjudged: Unjudged = "error"
    zero_idcg: ZeroIdcg = "zero"
    ties: Ties = "error"
    missing_queries: MissingQueries = "zero"
    extra_queries: ExtraQueries = "error"
    seed: int = 0
    relevant: int = DEFAULT_RELEVANT

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", validate_k(self.k))
        _check_choice("gain", self.gain, GAINS)
        _check_choice("unjudged", self.unjudged, UNJUDGED)
        _check_choice("zero_idcg", self.zero_idcg, ZERO_IDCG)
        _check_choice("ties", self.ties, TIES)
        _check_choice("missing_queries", self.missing_queries, MISSING_QUERIES)
        _check_choice("extra_queries", self.extra_queries, EXTRA_QUERIES)
        if not is_integer(self.seed) or not 0 <= int(self.seed) <= MAX_SEED:
            raise EvaluationError(
                gettext_noop("seed must be an integer 0..%(max)s, got %(seed)r"),
                {"seed": self.seed, "max": MAX_SEED},
            )
        object.__setattr__(self, "seed", int(self.seed))
        if not is_integer(self.relevant) or not 1 <= int(self.relevant) <= MAX_GRADE:
            raise EvaluationError(
                gettext_noop(
                    "the relevance threshold must be an integer 1..%(max)s (the lowest grade counted "
                    "as relevant), got %(relevant)r"
                ),
                {"relevant": self.relevant, "max": MAX_GRADE},
            )
        object.__setattr__(self, "relevant", int(self.relevant))

    def as_dict(self) -> dict[str, Any]:
        """The JSON `settings` object, keys in the documented order.

        `relevant` is written only when it is not the default 1: the documents and reports of
        NDCG stored before the threshold existed stay byte for byte what they were, and a missing
        threshold reads back as 1 (`from_mapping`). `full_dict()` always has it.
        """
        values = asdict(self)
        if self.relevant == DEFAULT_RELEVANT:
            del values["relevant"]
        return values

    def full_dict(self) -> dict[str, Any]:
        """Every setting, the threshold included: what a metric's recorded definition holds."""
        return asdict(self)

    def differences(self, other: Settings) -> list[str]:
        """Human-readable list of the settings that differ, e.g. ["k (10 vs 5)"]."""
        mine, theirs = self.full_dict(), other.full_dict()
        return [f"{key} ({mine[key]!r} vs {theirs[key]!r})" for key in mine if mine[key] != theirs[key]]

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Settings:
        """Settings from a form's cleaned data, command options or a stored dict.

        Keys that are not settings are ignored; settings the mapping lacks keep their defaults.
        """
        return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})

    def describe(self) -> list[str]:
        """Each policy in words, for reports."""
        gain = {
            "linear": "linear gain: a document of grade r adds r / log2(i + 1) at position i",
            "exponential": "exponential gain: a document of grade r adds (2^r - 1) / log2(i + 1) "
            "at position i",
        }[self.gain]
        unjudged = {
            "error": "unjudged documents: an error (every ID in the top K must have a grade in the pool)",
            "zero": "unjudged documents: scored as gain 0 and counted per system",
        }[self.unjudged]
        zero_idcg = {
            "zero": "zero IDCG (no document graded above 0): NDCG 0, kept in the mean",
            "exclude": "zero IDCG (no document graded above 0): left out of the mean, still counted",
        }[self.zero_idcg]
        ties = {
            "error": "tied scores: an error when tied documents reach into the top K",
            "docid-desc": "tied scores: broken by document ID, descending (trec_eval's rule)",
            "docid-asc": "tied scores: broken by document ID, ascending",
            "input-order": "tied scores: kept in input (file) order",
            "expected": (
                "tied scores: expected DCG over every order of each tied group (scikit-learn's tie averaging)"
            ),
        }[self.ties]
        missing = {
            "zero": "pool queries missing from a run: an empty ranking, NDCG 0, counted",
            "error": "pool queries missing from a run: an error",
        }[self.missing_queries]
        extra = {
            "error": "run queries that are not in the pool: an error",
            "ignore": "run queries that are not in the pool: skipped and counted",
        }[self.extra_queries]
        # Like `as_dict`, the default threshold is left unsaid so NDCG reports keep their bytes.
        relevant = (
            [f"relevant: a grade of {self.relevant} or more (recall, precision, RR and AP)"]
            if self.relevant != DEFAULT_RELEVANT
            else []
        )
        return [
            f"K = {self.k}; IDCG from the whole pool's top {self.k} grades; discount log2(i + 1), i from 1",
            gain,
            unjudged,
            zero_idcg,
            ties,
            missing,
            extra,
            f"random seed {self.seed} (randomization test and bootstrap)",
            *relevant,
        ]


DEFAULT_SETTINGS = Settings()

# A per-position breakdown (score_query, RunResult.explain, the web's query page) lists K rows per
# table, empty positions included: past this K it would be megabytes of zero rows per query. The
# batch engine's scores have no such limit.
MAX_BREAKDOWN_K = 10_000


def as_settings(settings: object) -> Settings:
    """A Settings as is; a mapping of its fields (unknown keys refused) as Settings.from_mapping."""
    if isinstance(settings, Settings):
        return settings
    if isinstance(settings, Mapping):
        unknown = sorted(set(map(str, settings)) - {f.name for f in fields(Settings)})
        if unknown:
            raise EvaluationError(
                gettext_noop("unknown settings %(unknown)s; allowed: %(allowed)s"),
                {"unknown": ", ".join(unknown), "allowed": ", ".join(f.name for f in fields(Settings))},
            )
        return Settings.from_mapping(settings)
    raise EvaluationError(
        gettext_noop("settings must be a Settings or a mapping of its fields, got %(type)s"),
        {"type": type(settings).__name__},
    )


def gain_function(gain: Gain) -> Callable[[int], float]:
    if gain == "linear":
        return float
    return lambda grade: float(2**grade - 1)


def gain_table(gain: Gain) -> np.ndarray:
    """Gain of grades 0..3 as float64, indexable by grade."""
    f = gain_function(gain)
    return np.array([f(grade) for grade in range(MIN_GRADE, MAX_GRADE + 1)], dtype=np.float64)
