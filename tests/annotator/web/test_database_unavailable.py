"""A database that cannot be reached answers 503 (Retry-After, "nothing was saved"), never a 500.

The unit tests make every query of a request fail as psycopg fails when PostgreSQL is gone; a
failure in a view reaches `DatabaseBusyMiddleware`, one in a middleware reaches handler500
(`annotator.web.outage.server_error`). The last tests stop and start a private PostgreSQL cluster
under a running server.
"""

from __future__ import annotations

import html
import json
import logging
import os
import pwd
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from glob import glob
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any
from urllib.error import HTTPError
from urllib.parse import urlencode
from urllib.request import HTTPCookieProcessor, HTTPRedirectHandler, OpenerDirector, Request, build_opener

import psycopg
import pytest
from django.db import InterfaceError, OperationalError, connection
from django.test import Client
from django.urls import reverse

from annotator.models import Grade
from annotator.web.outage import database_unreachable
from tests.conftest import Cast
from tests.factories import make_pairs

ROOT = Path(__file__).resolve().parents[3]
HTMX = {"HX-Request": "true"}
ENGLISH = "The database cannot be reached right now (it may be restarting), so nothing was saved."
CHINESE = "目前无法连接数据库（可能正在重启），因此没有保存任何内容。"


def wrapped(cause: Exception, kind: type[Exception] = OperationalError) -> Exception:
    """The error Django raises for the driver's `cause` (its DatabaseErrorWrapper chains it)."""
    error = kind(str(cause))
    error.__cause__ = cause
    return error


def failing(error: Callable[[], Exception], when: Callable[[str], bool] = lambda sql: True) -> Any:
    """An execute wrapper raising `error()` for every query `when` selects, before it is sent."""

    def wrapper(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if when(sql):
            raise error()
        return execute(sql, params, many, context)

    return connection.execute_wrapper(wrapper)


def refused() -> Exception:
    return wrapped(psycopg.OperationalError('connection to server at "127.0.0.1" failed: Connection refused'))


def text(response: Any) -> str:
    return html.unescape(response.content.decode())


def assert_unreachable_page(response: Any, sentence: str = ENGLISH) -> None:
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    assert "no-store" in response["Cache-Control"]
    body = text(response)
    assert sentence in body and "Traceback" not in body


# --- Which errors mean the database is out of reach ---------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        refused(),
        wrapped(psycopg.OperationalError("the connection is closed")),
        wrapped(psycopg.errors.AdminShutdown("terminating connection due to administrator command")),
        wrapped(psycopg.errors.CannotConnectNow("the database system is starting up")),
        wrapped(psycopg.errors.ConnectionFailure("connection failure")),
        # As another driver (psycopg2) words them, with no psycopg error behind.
        InterfaceError("connection already closed"),
        OperationalError("server closed the connection unexpectedly"),
    ],
    ids=repr,
)
def test_a_lost_or_refused_connection_counts_as_unreachable(error: Exception) -> None:
    assert database_unreachable(error)


@pytest.mark.parametrize(
    "error",
    [
        wrapped(psycopg.errors.DeadlockDetected("deadlock detected")),
        wrapped(psycopg.errors.QueryCanceled("canceling statement due to statement timeout")),
        wrapped(psycopg.errors.DiskFull("could not extend file")),
        wrapped(psycopg.InterfaceError("the cursor is closed"), InterfaceError),
        wrapped(sqlite3.OperationalError("database is locked")),  # DatabaseBusyMiddleware's own page
        wrapped(sqlite3.OperationalError("no such table: annotator_grade")),
        RuntimeError("connection refused"),
    ],
    ids=repr,
)
def test_an_answer_from_a_running_database_does_not(error: Exception) -> None:
    assert not database_unreachable(error)


# --- In a view: DatabaseBusyMiddleware ------------------------------------------------------------


def test_a_page_whose_session_cannot_be_read_is_a_503_in_english(
    cast: Cast, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """The view reads `request.user`: the session's query fails in the view. The test client
    raises nothing: the error never became a server error."""
    client.force_login(cast.editor)
    with caplog.at_level(logging.WARNING), failing(refused):
        response = client.get(reverse("home"))
    assert_unreachable_page(response)
    assert response["Content-Language"] == "en"
    assert '<a href="/">Retry</a>' in text(response)
    warnings = [r for r in caplog.records if r.name == "annotator.web.outage"]
    assert [r.levelno for r in warnings] == [logging.WARNING]
    assert warnings[0].getMessage().startswith("Database unreachable on GET /: ")
    assert warnings[0].exc_info is None
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no "Service Unavailable"


def test_the_page_reads_in_chinese_with_the_language_cookie(
    cast: Cast, client: Client, settings: Any
) -> None:
    client.force_login(cast.editor)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    with failing(refused):
        response = client.get(reverse("home"))
    assert_unreachable_page(response, CHINESE)
    assert response["Content-Language"] == "zh-hans"
    assert "无法连接数据库" in text(response) and ENGLISH not in text(response)


def test_a_query_failing_while_the_page_renders_is_a_503(cast: Cast, client: Client) -> None:
    """The session and user load; the project list, read while the template renders, does not."""
    client.force_login(cast.editor)
    with failing(refused, when=lambda sql: "annotator_membership" in sql):
        response = client.get(reverse("home"))
    assert_unreachable_page(response)


def test_a_grade_saved_with_htmx_is_answered_as_the_busy_case_is(cast: Cast, client: Client) -> None:
    """htmx gets the same 503 page with Retry-After, no swap instructions: htmx swaps no 5xx, the
    grading page keeps the grade and sends it again, app.js says the page's sentence."""
    (pair,) = make_pairs(cast.alpha, "A")
    grade_url = reverse(
        "grade_save", kwargs={"slug": cast.alpha.slug, "set_id": pair.grading_set_id, "candidate_id": pair.pk}
    )
    client.force_login(cast.editor)
    lost = lambda: wrapped(psycopg.errors.AdminShutdown("terminating connection"))  # noqa: E731
    writes = lambda sql: sql.lstrip().upper().startswith(("INSERT", "UPDATE"))  # noqa: E731
    page = reverse(
        "grade_page",
        kwargs={"slug": cast.alpha.slug, "set_id": pair.grading_set_id, "query_id": pair.query_id},
    )
    for headers in ({}, HTMX):
        with failing(lost, when=writes):
            response = client.post(
                grade_url, {"grade": "2", "document_version": "1"}, headers={**headers, "Referer": page}
            )
        assert_unreachable_page(response)
        assert not response.has_header("HX-Retarget") and not response.has_header("HX-Reswap")
        assert f'<a href="{page}">Back to the form</a>' in text(response)
    assert not Grade.objects.exists()


def test_with_debug_on_a_failure_in_a_view_is_still_the_503_page(
    cast: Cast, client: Client, settings: Any
) -> None:
    settings.DEBUG = True
    client.force_login(cast.editor)
    with failing(refused):
        response = client.get(reverse("home"))
    assert_unreachable_page(response)


# --- Outside any view: handler500 ---------------------------------------------------------------


def test_a_user_loaded_by_a_middleware_is_a_503_through_handler500(
    cast: Cast, client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """set_language reads no user; PrivatePagesMiddleware does, after it, where no
    process_exception runs."""
    client.force_login(cast.editor)
    client.raise_request_exception = False  # the error did reach Django's handler: the client re-raises it
    with caplog.at_level(logging.WARNING), failing(refused):
        response = client.post(
            reverse("set_language"),
            {"language": "zh-hans", "next": "/"},
            headers={"Referer": "http://testserver/"},
        )
    assert_unreachable_page(response)
    assert '<a href="http://testserver/">Back to the form</a>' in text(response)
    assert [r.getMessage() for r in caplog.records] == [
        f"Database unreachable on POST /i18n/setlang/: {refused()}"  # one line, no traceback
    ]
    assert caplog.records[0].exc_info is None


def test_a_refused_csrf_check_reads_the_user_and_answers_in_chinese(cast: Cast) -> None:
    """The CSRF failure view (a process_view) reads the user: handler500, in the reader's language."""
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(cast.editor)
    with failing(refused):
        response = client.post(reverse("logout"), headers={"Accept-Language": "zh-hans"})
    assert_unreachable_page(response, CHINESE)


def test_an_htmx_request_failing_in_a_middleware_gets_the_same_answer(cast: Cast) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(cast.editor)
    with failing(lambda: InterfaceError("connection already closed")):
        response = client.post(reverse("set_language"), {"language": "en", "next": "/"}, headers=HTMX)
    assert_unreachable_page(response)


@pytest.mark.parametrize(
    "error",
    [
        lambda: RuntimeError("a bug"),
        lambda: wrapped(psycopg.errors.DeadlockDetected("deadlock detected")),
    ],
    ids=["bug", "deadlock"],
)
def test_any_other_error_stays_a_500(cast: Cast, error: Callable[[], Exception]) -> None:
    client = Client(raise_request_exception=False)
    client.force_login(cast.editor)
    for path in (reverse("home"), reverse("set_language")):  # in the view, in a middleware
        with failing(error):
            response = (
                client.post(path, {"language": "en", "next": "/"}) if "i18n" in path else client.get(path)
            )
        assert response.status_code == 500
        assert "Something went wrong on our side" in text(response)
        assert not response.has_header("Retry-After")


# --- A real PostgreSQL stopped and started under a running server ----------------------------------

INITDB = sorted(glob("/usr/lib/postgresql/*/bin/initdb"))

# The app served as in production (DEBUG off: handler500 answers, not Django's debug page) by a
# WSGI server in its own process, so every request ends as a real one does (close_old_connections).
SERVER = """
import django
django.setup()
from django.conf import settings
settings.DEBUG = False  # DJANGO_DEBUG=0 would also require TLS, which this test has not
from django.core.wsgi import get_wsgi_application
from wsgiref.simple_server import WSGIRequestHandler, make_server

class Quiet(WSGIRequestHandler):
    def log_message(self, *args):
        pass

server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=Quiet)
print(server.server_port, flush=True)
server.serve_forever()
"""

SEED = """
import json
import django
django.setup()
from django.contrib.auth import get_user_model
from django.urls import reverse
from annotator.models import Membership, Project, Role
from tests.factories import make_pairs

project = Project.objects.create(name="Outage", slug="outage")
user = get_user_model().objects.create_user(username="ed", password="correct horse battery staple")
Membership.objects.create(project=project, user=user, role=Role.EDITOR)
(pair,) = make_pairs(project, "A")
kwargs = {"slug": project.slug, "set_id": pair.grading_set_id}
print(json.dumps({
    "page": reverse("grade_page", kwargs={**kwargs, "query_id": pair.query_id}),
    "save": reverse("grade_save", kwargs={**kwargs, "candidate_id": pair.pk}),
}))
"""


class Cluster:
    """A PostgreSQL cluster of its own, in a temporary folder (socket included), on a free port."""

    def __init__(self, bin_dir: Path, root: Path, owner: str | None) -> None:
        self.bin_dir, self.root, self.owner = bin_dir, root, owner
        self.port = free_port()
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    def run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        # initdb refuses to run as root: the cluster is then the postgres OS user's.
        command = [str(self.bin_dir / tool), *args]
        if self.owner:
            command = ["runuser", "-u", self.owner, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, timeout=120)

    def init(self) -> subprocess.CompletedProcess[str]:
        data = str(self.root / "data")
        return self.run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", check=False)

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.root / "server.log")
        self.run("pg_ctl", "-D", str(self.root / "data"), "-l", log, "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self.run("pg_ctl", "-D", str(self.root / "data"), "-m", mode, "-w", "stop", check=False)

    def running(self) -> bool:
        return self.run("pg_ctl", "-D", str(self.root / "data"), "status", check=False).returncode == 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def app_environment(database_url: str, conn_max_age: str = "0") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DATABASE_URL=database_url,
        DJANGO_SETTINGS_MODULE="annotator.settings",
        DJANGO_CONN_MAX_AGE=conn_max_age,
        PYTHONPATH=str(ROOT),
    )
    return env


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[Cluster, dict[str, str]]]:
    """A migrated private cluster with an editor and one pair to grade; removed whatever happens."""
    if not INITDB:
        pytest.skip("PostgreSQL's server programs are not installed (no /usr/lib/postgresql/*/bin/initdb)")
    owner = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root, and initdb refuses root; there is no postgres OS user to run it as")
        if shutil.which("runuser") is None:
            pytest.skip("running as root, and initdb refuses root; runuser is missing to run it as postgres")
        owner = "postgres"
    # Short: the socket's path must fit in 107 bytes, and pytest's tmp_path may not.
    root = Path(tempfile.mkdtemp(prefix="rl-pg-"))
    if owner:
        shutil.chown(root, user=owner)
    cluster = Cluster(Path(INITDB[-1]).parent, root, owner)
    try:
        initdb = cluster.init()
        if initdb.returncode != 0:
            pytest.skip(f"initdb could not create a cluster: {initdb.stderr.strip()[:300]}")
        cluster.start()
        env = app_environment(cluster.url)
        manage = [sys.executable, "manage.py"]
        subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, timeout=300)
        seeded = subprocess.run(
            [sys.executable, "-c", SEED],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
            timeout=120,
        )
        yield cluster, json.loads(seeded.stdout.strip().splitlines()[-1])
    finally:
        cluster.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)


class KeepRedirects(HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is returned as it is


class Browser:
    """Cookies, CSRF and no redirects followed: enough of a browser for the app's forms."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = CookieJar()
        self.opener: OpenerDirector = build_opener(HTTPCookieProcessor(self.jar), KeepRedirects)

    def csrf(self) -> str:
        return next((c.value or "" for c in self.jar if c.name == "csrftoken"), "")

    def send(
        self, method: str, path: str, data: dict[str, str] | None = None, **headers: str
    ) -> tuple[int, Any, str]:
        body = urlencode(data).encode() if data is not None else None
        if method == "POST":
            headers = {"X-CSRFToken": self.csrf(), **headers}
        request = Request(self.base + path, data=body, method=method, headers=headers)
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, response.headers, response.read().decode()
        except HTTPError as error:
            with error:
                return error.code, error.headers, error.read().decode()


def serve(database_url: str, conn_max_age: str, log: Path) -> tuple[subprocess.Popen[str], str]:
    with log.open("w") as stderr:
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER],
            cwd=ROOT,
            env=app_environment(database_url, conn_max_age),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
    assert server.stdout is not None
    port = server.stdout.readline().strip()
    assert port.isdigit(), f"the server did not start: {log.read_text()}"
    return server, f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("conn_max_age", ["0", "60"], ids=["new-connection-per-request", "persistent"])
def test_a_stopped_postgresql_is_a_503_and_the_app_reconnects_when_it_is_back(
    cluster: tuple[Cluster, dict[str, str]], conn_max_age: str, tmp_path: Path
) -> None:
    pg, urls = cluster
    if not pg.running():  # left stopped by a failed run of this test
        pg.start()
    log = tmp_path / "server.log"
    server, base = serve(pg.url, conn_max_age, log)
    try:
        browser = Browser(base)
        assert browser.send("GET", "/accounts/login/")[0] == 200
        status, headers, _ = browser.send(
            "POST",
            "/accounts/login/",
            {
                "username": "ed",
                "password": "correct horse battery staple",
                "csrfmiddlewaretoken": browser.csrf(),
            },
        )
        assert status == 302, "not signed in"
        assert browser.send("GET", urls["page"])[0] == 200

        pg.stop("fast")
        for method, path, data, extra in [
            ("GET", urls["page"], None, {}),  # the view reads the session
            ("POST", urls["save"], {"grade": "2", "document_version": "1"}, {}),
            ("POST", urls["save"], {"grade": "2", "document_version": "1"}, HTMX),
            ("POST", "/i18n/setlang/", {"language": "en", "next": "/"}, {}),  # a middleware reads it
        ]:
            status, headers, body = browser.send(method, path, data, **extra)
            assert (status, headers["Retry-After"]) == (503, "30"), (method, path, status, body[:2000])
            assert "nothing was saved" in body and "Traceback" not in body

        pg.start()
        assert browser.send("GET", urls["page"])[0] == 200  # the same process, connected again
        status, _, body = browser.send("POST", urls["save"], {"grade": "3", "document_version": "1"}, **HTMX)
        assert status == 200 and 'data-state="saved"' in body
    finally:
        server.terminate()
        server.wait(timeout=30)
    logged = log.read_text()
    assert f"Database unreachable on GET {urls['page']}" in logged
    assert "Database unreachable on POST /i18n/setlang/" in logged
    assert "Traceback" not in logged and "Internal Server Error" not in logged, logged
