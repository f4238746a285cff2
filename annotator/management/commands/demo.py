"""`python manage.py demo`: the seeds' help-center example as a ready-to-use project.

Idempotent: running it again leaves one copy of everything. Later features extend `build_demo`
so that `make run` always shows each of them with the seeds' data.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.demo import DemoContext
from annotator.demo import comparisons as demo_comparisons
from annotator.demo import disputes as demo_disputes
from annotator.demo import grading as demo_grading
from annotator.demo import live as demo_live
from annotator.demo import pools as demo_pools
from annotator.models import Membership, Project, Role

DEMO_PASSWORD = "ranking-lab-demo"
DEMO_USERS = [
    ("owner", Role.OWNER),
    ("reviewer", Role.REVIEWER),
    ("editor-a", Role.EDITOR),
    ("editor-b", Role.EDITOR),
]
DEMO_SLUG = "help-center-demo"
# Each feature adds its seed data in turn; later steps rely on what earlier ones made. The last
# step leaves work in progress so every role has something to do after `make run`.
DEMO_STEPS = [
    demo_grading.build,
    demo_disputes.build,
    demo_pools.build,
    demo_comparisons.build,
    demo_live.build,
]


@transaction.atomic
def build_demo() -> Project:
    User = get_user_model()
    project, _ = Project.objects.update_or_create(
        slug=DEMO_SLUG,
        defaults={
            "name": "Help center demo",
            "name_zh_hans": "帮助中心示例",
            "description": "The seeds' help-center example: grade, dispute, freeze and compare.",
            "content_language": "zh-Hans",  # the seeds' queries and articles are in Chinese
        },
    )
    users = {}
    for username, role in DEMO_USERS:
        user, created = User.objects.get_or_create(username=username)
        if created or not user.check_password(DEMO_PASSWORD):
            user.set_password(DEMO_PASSWORD)
            user.is_active = True
            user.save()
        Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
        users[username] = user
    ctx = DemoContext(project=project, users=users)
    for step in DEMO_STEPS:
        step(ctx)
    return project


class Command(BaseCommand):
    help = "Create (or refresh) the demo project and its users. Refuses to run when DJANGO_DEBUG=0."

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            raise CommandError(
                "The demo has well-known passwords: it refuses to run when DJANGO_DEBUG=0.", returncode=2
            )
        project = build_demo()
        self.stdout.write(self.style.SUCCESS(f"Demo project “{project.name}” is ready at /p/{project.slug}/"))
        self.stdout.write(f"Demo logins (password: {DEMO_PASSWORD}):")
        for username, role in DEMO_USERS:
            self.stdout.write(f"  {username:<10} {role.label}")
