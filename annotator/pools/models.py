"""Frozen judgment pools: immutable, hashed versions that every score is computed against."""

from __future__ import annotations

import hashlib
import itertools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, models
from django.db.models import F, Q
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from annotator.disputes.models import DisputeStatus
from annotator.documents.models import Query
from annotator.projects.models import Project
from evaluation.formats.ids import formula_ids, unserialisable_id_chars


class PoolIntegrityError(Exception):
    """A stored pool version no longer matches its hash: never score against it."""


class PoolImmutableError(Exception):
    """Someone tried to change or delete a frozen pool version or one of its judgments."""


# How the hash is computed, written into every export manifest so anyone can recompute it.
CANONICAL_RULE = (
    "One line per judgment: query_id TAB doc_id TAB grade LF, sorted by (query_id, doc_id) in "
    "Unicode code point order, encoded as UTF-8, no header; sha256 is the hex SHA-256 of those bytes."
)


# Said in every manifest of a version holding such IDs (English, as the rule above: a manifest is
# the same bytes whoever downloads it).
FORMULA_WARNING = (
    "Some IDs start with =, +, -, @, a tab or a carriage return, so a spreadsheet opening a CSV "
    "export runs them as formulas. Exports keep every ID as written, because the SHA-256 is computed "
    "over them; to open the judgments in a spreadsheet, download the spreadsheet-safe CSV "
    "(export ?format=csv&variant=spreadsheet), which prefixes those cells with '."
)
# An ID reading as a formula starts a line or follows a tab (tabs and CRs cannot be in the text).
_FORMULA_ID = re.compile(r"(?:^|\t)[=+\-@]", re.MULTILINE)


def canonical_serialisation(judgments: Iterable[tuple[str, str, int]]) -> str:
    """The text a pool version's SHA-256 is computed over.

    One line per judgment, `query_id TAB doc_id TAB grade LF`, sorted by (query_id, doc_id) in
    Unicode code point order, encoded as UTF-8, no header. Only the judgments count (not who
    froze it, nor where grades came from), so the hash is the same whichever export format or
    database holds them and anyone can recompute it from an export.
    """
    rows: list[Any] = []
    for query_id, doc_id, grade in judgments:
        check_judgment(query_id, doc_id, grade)
        rows.append((query_id, doc_id, grade))
    # Sorted whole, a pair given twice is next to itself: no set of every pair is needed (it
    # cost more memory than the text). Without such pairs, (query, doc, grade) sorts as (query, doc).
    rows.sort()
    for before, after in itertools.pairwise(rows):
        if before[:2] == after[:2]:
            raise ValueError(
                gettext("pair (%(query)s, %(doc)s) appears twice") % {"query": after[0], "doc": after[1]}
            )
    for i, (q, d, g) in enumerate(rows):
        rows[i] = f"{q}\t{d}\t{g}\n"  # in place: each row's tuple goes as its line comes
    return "".join(rows)


def check_judgment(query_id: str, doc_id: str, grade: int) -> None:
    """ValueError unless the canonical text can hold the judgment (canonical_serialisation's rule
    for one row; a reader that holds the judgments by pair has no pair twice to check)."""
    for value in (query_id, doc_id):
        # What would break the text itself. The readers also refuse invisible characters
        # (bad_id_chars), which versions frozen before that rule may hold: their hash stays valid.
        if not value or value != value.strip() or unserialisable_id_chars(value):
            raise ValueError(
                gettext(
                    "ID %(value)r is empty, padded with spaces, or holds a tab, a line break, a control "
                    "character or a byte-order mark"
                )
                % {"value": value}
            )
    if type(grade) is not int or not 0 <= grade <= 3:
        raise ValueError(
            gettext("grade %(grade)r of (%(query)s, %(doc)s) is not an integer 0..3")
            % {"grade": grade, "query": query_id, "doc": doc_id}
        )


def exclusion_row(entry: dict[str, Any]) -> dict[str, Any]:
    """A left-out pair of a version with `detail` in the reader's language (the stored sentence for
    versions frozen before the codes and numbers were kept)."""
    return entry | {
        "detail": exclusion_text(entry.get("why", ""), entry.get("values", {})) or entry.get("detail", "")
    }


def sha256_hex(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def parse_canonical(canonical: str) -> dict[str, dict[str, int]]:
    """{query_id: {doc_id: grade}} from the canonical text (a million lines in well under a second).

    The text is sorted by query, so each query's lines are one contiguous block; splitting once and
    building each block's dict with zip keeps the per-judgment work in C.
    """
    if not canonical:
        return {}
    fields = canonical.replace("\n", "\t").split("\t")
    fields.pop()  # the text ends with LF: one empty field after the last grade
    query_ids, doc_ids, tokens = fields[0::3], fields[1::3], fields[2::3]
    grade_of = {"0": 0, "1": 1, "2": 2, "3": 3}
    grades = list(map(grade_of.__getitem__, tokens))
    sizes = Counter(query_ids)
    result: dict[str, dict[str, int]] = {}
    start = 0
    for query in dict.fromkeys(query_ids):
        end = start + sizes[query]
        result[query] = dict(zip(doc_ids[start:end], grades[start:end], strict=True))
        start = end
    return result


class PoolQuerySet(models.QuerySet["Pool"]):
    def in_project(self, project: Project) -> PoolQuerySet:
        return self.filter(project=project)


class Pool(models.Model):
    """A named lineage of frozen versions (1, 2, ...)."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="pools")
    name = models.CharField(_("name"), max_length=200)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    objects = PoolQuerySet.as_manager()

    class Meta:
        ordering = ["project", "name"]
        verbose_name = _("pool")
        verbose_name_plural = _("pools")
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="pool_unique_name")]

    def __str__(self) -> str:
        return self.name

    def latest_version(self) -> PoolVersion | None:
        return self.versions.order_by("-number").first()

    @classmethod
    def unique_name(cls, project: Project, wanted: str) -> str:
        """`wanted`, or `wanted (2)`, `(3)`... so a new lineage never takes over an existing one."""
        name, n = wanted[:190], 1
        while cls.objects.filter(project=project, name=name).exists():
            n += 1
            name = f"{wanted[:190]} ({n})"
        return name


class ImmutableQuerySet(models.QuerySet):
    """Frozen rows are written once (create / bulk_create) and then never changed or deleted.

    Every bulk path Django offers is closed here; `save()`/`delete()` on the instances are closed
    on the models; PostgreSQL adds a trigger (migration pools_immutability_triggers) for raw SQL.
    """

    def _refuse(self, what: str) -> PoolImmutableError:
        return PoolImmutableError(
            f"{self.model._meta.verbose_name_plural} are frozen: {what} is refused. "
            "Start a new version instead."
        )

    def update(self, **kwargs: Any) -> int:
        raise self._refuse("QuerySet.update()")

    def _update(self, values: Any, *args: Any, **kwargs: Any) -> int:  # Django 6.1 added returning_fields
        raise self._refuse("an UPDATE")

    def bulk_update(self, objs: Any, fields: Any, batch_size: int | None = None) -> int:
        raise self._refuse("bulk_update()")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise self._refuse("QuerySet.delete()")

    def _raw_delete(self, using: Any) -> int:
        raise self._refuse("a DELETE")

    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> list[Any]:
        if kwargs.get("update_conflicts") or kwargs.get("ignore_conflicts"):
            # An upsert would overwrite frozen rows; ignoring conflicts would silently drop new ones.
            raise self._refuse("bulk_create() with update_conflicts/ignore_conflicts")
        return super().bulk_create(objs, *args, **kwargs)


class ImmutableModel(models.Model):
    """Instances may be inserted once; saving an existing row or deleting one raises."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise PoolImmutableError(f"{self._meta.verbose_name} {self} is frozen: it cannot be changed.")
        # force_insert: a hand-set primary key of an existing row must fail, not turn into an UPDATE.
        kwargs["force_insert"] = True
        kwargs.pop("force_update", None)
        kwargs.pop("update_fields", None)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise PoolImmutableError(f"{self._meta.verbose_name} {self} is frozen: it cannot be deleted.")


class PoolVersionQuerySet(ImmutableQuerySet):
    def in_project(self, project: Project) -> PoolVersionQuerySet:
        return self.filter(pool__project=project)


@dataclass(frozen=True)
class DiffRow:
    kind: str  # "added" | "removed" | "changed"
    query_id: str
    doc_id: str
    old_grade: int | None
    new_grade: int | None


@dataclass(frozen=True)
class PoolDiff:
    """What changed from version `old` to version `new`, pair by pair, in canonical order."""

    rows: list[DiffRow] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[DiffRow]:
        return [r for r in self.rows if r.kind == kind]

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(r.kind for r in self.rows)
        return {k: c.get(k, 0) for k in ("added", "removed", "changed")}


def diff_judgments(old: dict[str, dict[str, int]], new: dict[str, dict[str, int]]) -> PoolDiff:
    """Pairs only in `new` (added), only in `old` (removed) and in both with another grade (changed)."""
    rows = []
    for query_id in sorted(old.keys() | new.keys()):
        a, b = old.get(query_id, {}), new.get(query_id, {})
        for doc_id in sorted(a.keys() | b.keys()):
            if doc_id not in a:
                rows.append(DiffRow("added", query_id, doc_id, None, b[doc_id]))
            elif doc_id not in b:
                rows.append(DiffRow("removed", query_id, doc_id, a[doc_id], None))
            elif a[doc_id] != b[doc_id]:
                rows.append(DiffRow("changed", query_id, doc_id, a[doc_id], b[doc_id]))
    return PoolDiff(rows)


def exclusion_text(why: str, values: dict[str, Any]) -> str | None:
    """Why a pair could not be frozen, in the active language; None if `values` lack what it needs.

    Frozen versions keep the code and numbers (`why`, `values`) beside the sentence written at
    freeze time, so a page can say it in its reader's language.
    """
    if why == "open_dispute" and "status" in values:
        status = values["status"]
        label = DisputeStatus(status).label if status in DisputeStatus.values else status
        return gettext("open dispute (%(status)s)") % {"status": label}
    if why == "no_final_grade" and {"grades", "required"} <= values.keys():
        if values.get("stale"):
            # All grades in, yet no final grade: some wait for their editor's re-check, which "2 of
            # 2 grades" alone would not say.
            return ngettext(
                "no final grade (%(n)d of %(required)d grades; %(stale)d waits for its editor's re-check)",
                "no final grade (%(n)d of %(required)d grades; %(stale)d wait for their editors' re-check)",
                values["stale"],
            ) % {"n": values["grades"], "required": values["required"], "stale": values["stale"]}
        return gettext("no final grade (%(n)d of %(required)d grades)") % {
            "n": values["grades"],
            "required": values["required"],
        }
    return None


class PoolVersionSource(models.TextChoices):
    FROZEN = "frozen", _("Frozen from a grading set")
    IMPORTED = "imported", _("Imported from a file")


class PoolVersion(ImmutableModel):
    """Version N of a pool. Immutable once written: see the pools issue and its triggers."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField(_("version"))
    source = models.CharField(_("source"), max_length=16, choices=PoolVersionSource.choices)
    grading_set = models.ForeignKey(
        "annotator.GradingSet", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # The judgments in their canonical serialisation (documented in evaluation/README.md) and its SHA-256.
    # Scores load from this text after re-checking the hash, so a tampered row can never score.
    canonical = models.TextField(_("canonical serialisation"), editable=False)
    sha256 = models.CharField(_("SHA-256"), max_length=64)
    # Criteria version numbers used, pooling provenance, exclusions (pair + reason), counts per grade.
    criteria_versions = models.JSONField(_("criteria versions"), default=list)
    provenance = models.JSONField(_("provenance"), default=dict)
    exclusions = models.JSONField(_("excluded pairs"), default=list)
    counts = models.JSONField(_("counts"), default=dict)
    file_name = models.CharField(_("imported file name"), max_length=255, blank=True)
    file_sha256 = models.CharField(_("imported file SHA-256"), max_length=64, blank=True)
    frozen_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    frozen_at = models.DateTimeField(_("frozen at"), auto_now_add=True)

    objects = PoolVersionQuerySet.as_manager()

    class Meta:
        ordering = ["pool", "-number"]
        # Django's internal paths (save's UPDATE, related lookups) use the base manager: make it
        # the refusing one too.
        base_manager_name = "objects"
        verbose_name = _("pool version")
        verbose_name_plural = _("pool versions")
        constraints = [
            models.UniqueConstraint(fields=["pool", "number"], name="pool_version_unique_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="pool_version_number_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.pool} v{self.number}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._state.adding:
            self.verify()  # a version is born consistent with its hash, or not at all
        super().save(*args, **kwargs)

    def verify(self) -> None:
        if problem := self.hash_problem(self.canonical):
            raise PoolIntegrityError(problem)

    def hash_problem(self, canonical: str) -> str:
        """Why `canonical` (this version's stored text, read by the caller) must not be scored: it
        does not hash to the recorded SHA-256. "" when it does.

        The text is passed in so that a list page can read it, hash it and let it go, instead of
        keeping every version's (possibly large) text on its instance.
        """
        if sha256_hex(canonical) == self.sha256:
            return ""
        return gettext(
            "%(version)s: stored judgments do not match SHA-256 %(hash)s…; refusing to use them"
        ) % {"version": self, "hash": self.sha256[:12]}

    def _rows_as_canonical(self) -> str | None:
        """The stored judgment rows written out by the database in the canonical form, or None
        where this database cannot do it.

        Equal to `canonical` exactly when the rows are the hashed judgments (IDs hold no tab or
        line break, so the text determines the rows). The database builds the text: fetching a
        million rows into Python took ~5 s of a comparison's 7 (`make bench`). Canonical order is
        code-point order, which is byte order in UTF-8: PostgreSQL's "C" collation, SQLite's
        default BINARY. SQLite before 3.44 cannot order inside an aggregate, so there the rows
        come ordered from a subquery, which SQLite keeps in practice but does not promise: were
        the order ever different, the texts would differ and the caller compares row by row,
        slower but still exact.
        """
        table = PoolJudgment._meta.db_table
        vendor = connection.vendor
        if vendor == "postgresql":
            sql = (
                "SELECT string_agg(query_id || E'\\t' || doc_id || E'\\t' || grade::text, E'\\n' "
                f'ORDER BY query_id COLLATE "C", doc_id COLLATE "C") FROM {table} WHERE version_id = %s'
            )
        elif vendor == "sqlite":
            # Literal TAB and LF in the SQL text: ~10% faster than calling char() twice per row.
            sql = (
                "SELECT group_concat(line, '\n') FROM (SELECT query_id || '\t' || doc_id || '\t' || grade "
                f"AS line FROM {table} WHERE version_id = %s ORDER BY query_id, doc_id)"
            )
        else:
            return None
        with connection.cursor() as cursor:
            cursor.execute(sql, [self.pk])
            (text,) = cursor.fetchone()
        return f"{text}\n" if text else ""

    def judgments_by_query(self) -> dict[str, dict[str, int]]:
        """{query_id: {doc_id: grade}} for scoring, after checking the hash (loud on mismatch)."""
        self.verify()
        return parse_canonical(self.canonical)

    def formula_ids(self) -> list[str]:
        """The distinct IDs a spreadsheet would run as formulas (ids.reads_as_formula), sorted; read
        from the hashed text, so the warning holds for every export of it."""
        if not _FORMULA_ID.search(self.canonical):
            return []
        fields = self.canonical.replace("\n", "\t").split("\t")
        return formula_ids(fields[0::3] + fields[1::3])

    @property
    def hash_prefix(self) -> str:
        return self.sha256[:12]

    @property
    def exclusion_rows(self) -> list[dict[str, Any]]:
        """`exclusions`, each as `exclusion_row` gives it."""
        return [exclusion_row(entry) for entry in self.exclusions]

    def integrity_problems(self, limit: int = 20) -> list[str]:
        """Everything that disagrees with the hash: the canonical text, then the judgment rows,
        then the hash the comparisons computed on this version pinned.

        Empty when the version is intact. Scores load from `canonical` (checked by `verify`); the
        rows feed the pages and exports, so they are compared against it too. Text, hash and rows
        rewritten together agree with each other; a comparison's pinned hash still tells (review).
        """
        problems: list[str] = []
        pinned = sorted(
            set(self.comparisons.exclude(pool_sha256=self.sha256).values_list("pool_sha256", flat=True))  # type: ignore[attr-defined]
        )
        if pinned:
            problems.append(
                gettext(
                    "Comparisons computed on this version recorded its SHA-256 as %(pinned)s, not %(now)s…: "
                    "the version changed after they were computed."
                )
                % {"pinned": ", ".join(f"{sha[:12]}…" for sha in pinned[:3]), "now": self.sha256[:12]}
            )
        actual_hash = sha256_hex(self.canonical)
        if actual_hash != self.sha256:
            problems.append(
                gettext(
                    "The stored canonical text hashes to %(actual)s…, not the recorded SHA-256 %(recorded)s…."
                )
                % {"actual": actual_hash[:12], "recorded": self.sha256[:12]}
            )
            return problems
        if self._rows_as_canonical() == self.canonical:
            return problems  # the rows spell out the hashed text exactly: nothing to list
        expected = {(q, d): g for q, docs in parse_canonical(self.canonical).items() for d, g in docs.items()}
        actual: dict[tuple[str, str], int] = {}
        for q, d, g in self.judgments.values_list("query_id", "doc_id", "grade"):
            actual[(q, d)] = g
        if actual == expected:
            return problems
        for pair in sorted(expected.keys() | actual.keys()):
            if len(problems) >= limit:
                problems.append(gettext("… and more."))
                break
            where = {"query": pair[0], "doc": pair[1]}
            if pair not in actual:
                problems.append(
                    gettext("Judgment (%(query)s, %(doc)s) is missing from the stored rows.") % where
                )
            elif pair not in expected:
                problems.append(
                    gettext("Stored row (%(query)s, %(doc)s, %(grade)d) is not in the hashed judgments.")
                    % {**where, "grade": actual[pair]}
                )
            elif actual[pair] != expected[pair]:
                problems.append(
                    gettext(
                        "Stored row (%(query)s, %(doc)s) has grade %(stored)d, the hashed judgments say "
                        "%(hashed)d."
                    )
                    % {**where, "stored": actual[pair], "hashed": expected[pair]}
                )
        return problems

    def verified_rows(self) -> list[tuple[str, str, int]]:
        """(query_id, doc_id, grade) in canonical order after the hash check; what exports write."""
        return [(q, d, g) for q, docs in self.judgments_by_query().items() for d, g in docs.items()]

    def per_query_counts(self) -> list[dict[str, Any]]:
        """One row per query: judgments and how many of each grade, from the verified judgments."""
        rows = []
        for query_id, docs in sorted(self.judgments_by_query().items()):
            by_grade = Counter(docs.values())
            rows.append(
                {"query_id": query_id, "total": len(docs), "by_grade": [by_grade.get(g, 0) for g in range(4)]}
            )
        return rows

    def diff(self, other: PoolVersion) -> PoolDiff:
        """Changes from this version to `other` (both hash-checked)."""
        return diff_judgments(self.judgments_by_query(), other.judgments_by_query())

    def evidence_gap(self) -> models.QuerySet[PoolJudgment]:
        """Judgments whose document has a newer version now than the one that was graded.

        The pool does not change (it is frozen): the page warns so a reader knows the grades may
        describe content that is no longer what users see.
        """
        return (
            self.judgments.filter(document_version__isnull=False)
            .filter(document_version__version__lt=F("document_version__document__version"))
            .select_related("document_version__document")
        )

    def query_gap(self) -> list[str]:
        """IDs of the queries whose text or information need changed since their judgments were
        decided (their recorded fingerprint is not the query's now): the evidence gap of queries."""
        with_fingerprint = self.judgments.exclude(query_fingerprint="")
        recorded = set(with_fingerprint.values_list("query_id", "query_fingerprint").distinct())
        if not recorded:
            return []
        # A subquery, not a list of IDs: SQLite refuses 32,767 of them.
        in_version = with_fingerprint.order_by().values("query_id")
        now = {
            q.external_id: q.fingerprint
            for q in Query.objects.filter(project_id=self.pool.project_id, external_id__in=in_version).only(
                "external_id", "text", "information_need"
            )
        }
        return sorted(
            {
                query
                for query, seen in recorded
                if query in now and PoolJudgment(query_fingerprint=seen).query_changed_since(now[query])
            }
        )

    def manifest(self, fmt: str | None = None) -> dict[str, Any]:
        """What an export carries beside the data so the file can be checked and traced."""
        data: dict[str, Any] = {
            "pool": self.pool.name,
            "project": self.pool.project.slug,
            "version": self.number,
            "source": self.source,
            "sha256": self.sha256,
            "canonical_serialisation": CANONICAL_RULE,
            "criteria_versions": self.criteria_versions,
            "provenance": self.provenance,
            "counts": self.counts,
            "exclusions": self.exclusions,
            "frozen_by": self.frozen_by.get_username(),
            "frozen_at": self.frozen_at.isoformat(),
        }
        if self.file_name:
            data["imported_file"] = {"name": self.file_name, "sha256": self.file_sha256}
        if formulas := self.formula_ids():
            data["formula_ids"] = {
                "count": len(formulas),
                "examples": formulas[:10],
                "warning": FORMULA_WARNING,
            }
        if fmt is not None:
            data["format"] = fmt
        return data


class PoolJudgmentQuerySet(ImmutableQuerySet):
    pass


class PoolJudgment(ImmutableModel):
    """One frozen (query, document, grade), bound to the external IDs scores are computed on."""

    version = models.ForeignKey(PoolVersion, on_delete=models.PROTECT, related_name="judgments")
    query_id = models.CharField(_("query ID"), max_length=255)
    doc_id = models.CharField(_("document ID"), max_length=255)
    grade = models.PositiveSmallIntegerField(_("grade"))
    source = models.CharField(_("source"), max_length=16, blank=True)
    # The document version that was graded, for the evidence-gap warning (null for imports).
    document_version = models.ForeignKey(
        "annotator.DocumentVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    # Query.fingerprint of the query text the grade was decided on, for the same warning about
    # queries (which keep no versions); EARLIER_QUERY_TEXT when frozen while marked for a re-check
    # because the query changed (a text older than the one at freezing, which one is not known);
    # "" when not known at all: imported, or frozen before fingerprints were recorded.
    query_fingerprint = models.CharField(_("query fingerprint"), max_length=16, blank=True, default="")
    EARLIER_QUERY_TEXT = "earlier"  # not hex: never a fingerprint

    objects = PoolJudgmentQuerySet.as_manager()

    class Meta:
        ordering = ["version", "query_id", "doc_id"]
        base_manager_name = "objects"
        verbose_name = _("pool judgment")
        verbose_name_plural = _("pool judgments")
        constraints = [
            models.UniqueConstraint(
                fields=["version", "query_id", "doc_id"], name="pool_judgment_unique_pair"
            ),
            models.CheckConstraint(condition=Q(grade__lte=3), name="pool_judgment_grade_0_to_3"),
        ]

    def __str__(self) -> str:
        return f"{self.query_id} {self.doc_id} {self.grade}"

    def query_changed_since(self, fingerprint_now: str) -> bool:
        """Whether the query's text now differs from the one this grade was decided on (False
        when that is not known)."""
        recorded = self.query_fingerprint
        return recorded == self.EARLIER_QUERY_TEXT or (recorded != "" and recorded != fingerprint_now)
