"""Projects and the roles people hold in them.

Every page of the app lives inside one project, and a person's role in that project decides what
they may do there. Each role can do everything the roles below it can (editor < reviewer < owner);
`PERMISSIONS` names each thing a member may do and the lowest role that may do it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import connections, models
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser


class Role(models.TextChoices):
    EDITOR = "editor", _("Editor")
    REVIEWER = "reviewer", _("Reviewer")
    OWNER = "owner", _("Owner")

    @property
    def rank(self) -> int:
        return ROLE_RANK[self]

    def includes(self, other: Role) -> bool:
        """True when this role may do everything `other` may."""
        return self.rank >= other.rank


ROLE_RANK = {Role.EDITOR: 1, Role.REVIEWER: 2, Role.OWNER: 3}


class Permission(models.TextChoices):
    """What a member may do in a project, named by what it allows; the label says it to users (the
    roles help page lists them). Views are gated by one (`annotator.web.access.project_permission`);
    templates ask `{% if "freeze" in may %}`."""

    # Editor
    VIEW_PROJECT = "view_project", _("See the project: documents, queries, criteria, grading sets")
    GRADE = "grade", _("Grade documents, re-check own grades, give reasons in own disputes")
    # Reviewer
    SEE_ALL_GRADES = "see_all_grades", _("See every dispute, every grade of a pair, editor agreement")
    SETTLE_DISPUTES = "settle_disputes", _("Settle disputes; send on disputes stuck on someone")
    RECHECK_FINAL = "recheck_final", _("Re-check final grades whose document, query or criteria changed")
    VIEW_POOLS = "view_pools", _("See pool versions, their files, manifests and diffs")
    FREEZE = "freeze", _("Freeze a grading set as the next version of its pool")
    CONTINUE_POOL = "continue_pool", _("Start a grading set from a frozen pool version")
    VIEW_COMPARISONS = "view_comparisons", _("See runs, comparisons and their scores")
    COMPARE_RUNS = "compare_runs", _("Upload and delete runs, create comparisons")
    VIEW_JOBS = "view_jobs", _("See the project's background jobs (imports, freezes) and cancel them")
    # Owner
    EDIT_SETTINGS = "edit_settings", _("Change the project's names, description and content language")
    MANAGE_MEMBERS = "manage_members", _("Add members, change their roles, remove them")
    PUBLISH_CRITERIA = "publish_criteria", _("Publish a new version of the grading criteria")
    IMPORT_DOCUMENTS = "import_documents", _("Import documents")
    IMPORT_QUERIES = "import_queries", _("Import queries")
    CREATE_SETS = "create_sets", _("Create grading sets")
    POOL_CANDIDATES = "pool_candidates", _("Choose a set's pairs: pool them from runs, add or remove by hand")
    IMPORT_JUDGMENTS = "import_judgments", _("Import a judgments file as a pool version")


PERMISSIONS: dict[Permission, Role] = {
    Permission.VIEW_PROJECT: Role.EDITOR,
    Permission.GRADE: Role.EDITOR,
    Permission.SEE_ALL_GRADES: Role.REVIEWER,
    Permission.SETTLE_DISPUTES: Role.REVIEWER,
    Permission.RECHECK_FINAL: Role.REVIEWER,
    Permission.VIEW_POOLS: Role.REVIEWER,
    Permission.FREEZE: Role.REVIEWER,
    Permission.CONTINUE_POOL: Role.REVIEWER,
    Permission.VIEW_COMPARISONS: Role.REVIEWER,
    Permission.COMPARE_RUNS: Role.REVIEWER,
    Permission.VIEW_JOBS: Role.REVIEWER,
    Permission.EDIT_SETTINGS: Role.OWNER,
    Permission.MANAGE_MEMBERS: Role.OWNER,
    Permission.PUBLISH_CRITERIA: Role.OWNER,
    Permission.IMPORT_DOCUMENTS: Role.OWNER,
    Permission.IMPORT_QUERIES: Role.OWNER,
    Permission.CREATE_SETS: Role.OWNER,
    Permission.POOL_CANDIDATES: Role.OWNER,
    Permission.IMPORT_JUDGMENTS: Role.OWNER,
}
"""The lowest role that has each permission: the one place the role ladder is read.

Adding a permission: a member of `Permission`, named by what it allows, and its line here. Gate
the view with `@project_permission(Permission.X)` (annotator/web/access.py); check it in Python
with `membership.may(Permission.X)`, in services too, so a shell cannot skip it; in a template,
`{% if "x" in may %}`. The access-matrix test reads this mapping and needs no change. Giving a
permission to another role is its one line here, plus the roles help page
(templates/docs/*/roles.md) and the tests that expect the old refusal (test_permissions.py).
"""

# A BCP 47 language tag as HTML's lang attribute takes it: a 2-3 letter language, then optional
# subtags (script, region, ...) of 1-8 letters or digits, e.g. "zh-Hans", "en", "pt-BR".
validate_language_tag = RegexValidator(
    r"\A[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*\Z",
    _(
        "Enter a language tag: a 2- or 3-letter language code, then subtags after hyphens if needed, such as "
        "zh-Hans, en or pt-BR."
    ),
)


class SharedLockQuerySet[M: models.Model](models.QuerySet[M]):
    def lock_shared(self, pk: int) -> None:
        """Hold row `pk` under a shared lock to the end of the transaction: PostgreSQL's FOR SHARE,
        which Django's select_for_update has no mode for. Changes that must not interleave with a
        writer of that row take it (see GradingSetQuerySet, QueryQuerySet), and never wait for each
        other. SQLite needs none: its transactions here take the write lock when they begin
        (IMMEDIATE, see settings), so they run one at a time."""
        connection = connections[self.db]
        if connection.vendor != "postgresql":
            return
        table = connection.ops.quote_name(self.model._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT 1 FROM {table} WHERE id = %s FOR SHARE", [pk])  # noqa: S608 - the name is the model's


class ProjectQuerySet(models.QuerySet["Project"]):
    def for_user(self, user: AbstractBaseUser | AnonymousUser) -> ProjectQuerySet:
        """Projects the user is a member of; the only way views should list projects."""
        if not user.is_authenticated or not user.is_active:
            return self.none()
        return self.filter(memberships__user=user)


class Project(models.Model):
    name = models.CharField(_("name"), max_length=200)
    # Many editors work in Chinese: a project may carry its name in both UI languages.
    name_zh_hans = models.CharField(_("name in Simplified Chinese"), max_length=200, blank=True)
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    description = models.TextField(_("description"), blank=True)
    # The language the queries and documents are written in, whatever the UI language: pages mark
    # that text with it (HTML lang) so a screen reader reads Chinese help articles with a Chinese
    # voice inside the English UI (WCAG 3.1.2). Empty: mixed or not stated, no mark.
    content_language = models.CharField(
        _("language of queries and documents"),
        max_length=35,
        blank=True,
        validators=[validate_language_tag],
        help_text=_(
            "A language tag such as zh-Hans or en. Screen readers use it to read the queries and documents "
            "in the right voice; leave it empty when they are in several languages."
        ),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("project")
        verbose_name_plural = _("projects")

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("project_detail", kwargs={"slug": self.slug})

    def set_ids(self, *, open_only: bool = False) -> list[int]:
        """This project's grading set IDs (or its open ones), read now.

        Filter pairs, grades and disputes by these literal IDs, not by a join on the project:
        PostgreSQL then reads the pairs' index on their set with that set's own statistics, where
        the join made it guess a share of every project's rows (a 4,000-pair project's review
        queue took 1 s beside a 540,000-pair one)."""
        sets = self.grading_sets.filter(is_open=True) if open_only else self.grading_sets.all()
        return list(sets.values_list("pk", flat=True))

    @property
    def display_name(self) -> str:
        """The name in the active UI language, falling back to the main name."""
        if self.name_zh_hans and get_language() == "zh-hans":
            return self.name_zh_hans
        return self.name


class MembershipQuerySet(models.QuerySet["Membership"]):
    def with_users(self) -> MembershipQuerySet:
        return self.select_related("user").order_by("user__username")


class Membership(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    # PROTECT: people are never deleted out from under their work; deactivate them instead.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="memberships")
    role = models.CharField(_("role"), max_length=16, choices=Role.choices, default=Role.EDITOR)
    added_at = models.DateTimeField(_("added at"), auto_now_add=True)

    objects = MembershipQuerySet.as_manager()

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        constraints = [
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user_per_project"),
            models.CheckConstraint(
                condition=models.Q(role__in=[r.value for r in Role]), name="membership_role_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.project} · {self.get_role_display()}"

    @property
    def role_enum(self) -> Role:
        return Role(self.role)

    def can(self, needed: Role) -> bool:
        return self.role_enum.includes(needed)

    def may(self, permission: Permission) -> bool:
        return self.can(PERMISSIONS[permission])

    @property
    def permissions(self) -> frozenset[Permission]:
        """Everything this member may do; templates read it as `may` (context_processors.project)."""
        return frozenset(p for p in Permission if self.may(p))

    @property
    def is_last_owner(self) -> bool:
        """An owner with no other *active* owner beside them: a deactivated account cannot log in,
        so it cannot manage the project (the services in annotator/projects/services.py check this
        under a lock)."""
        return (
            self.role == Role.OWNER
            and not self.project.memberships.filter(role=Role.OWNER, user__is_active=True)
            .exclude(pk=self.pk)
            .exists()
        )
