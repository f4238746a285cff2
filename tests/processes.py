"""The app as its own processes, for tests that need them: a throwaway database of the suite's
engine, `manage.py` commands on it, and a web server with a worker beside it, as `make run`
starts them. The database is a file for SQLite, a fresh database on the same server for
PostgreSQL; the suite's own (pytest-django's) test database is never touched.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings

ROOT = Path(__file__).resolve().parents[1]
Query = Callable[[str], list[tuple[Any, ...]]]


@contextmanager
def throwaway_database(directory: Path, name: str) -> Iterator[tuple[str, Query]]:
    """(DATABASE_URL, a function running one SQL query on it); dropped afterwards."""
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        path = directory / f"{name}.sqlite3"

        def query(sql: str) -> list[tuple[Any, ...]]:
            with sqlite3.connect(path, timeout=20) as conn:
                return conn.execute(sql).fetchall()

        yield f"sqlite:///{path}", query
        return
    import psycopg

    name = f"{name}_{os.getpid()}"
    server = dict(
        host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432, user=db["USER"], password=db["PASSWORD"]
    )
    with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.execute(f'CREATE DATABASE "{name}"')

    def query(sql: str) -> list[tuple[Any, ...]]:
        with psycopg.connect(dbname=name, autocommit=True, **server) as conn:
            return conn.execute(sql).fetchall()

    url = f"postgres://{server['user']}:{server['password'] or ''}@{server['host']}:{server['port']}/{name}"
    try:
        yield url, query
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **server) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(env: dict[str, str], *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        text=True,
        capture_output=True,
        **kwargs,
    )


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextmanager
def serving(env: dict[str, str], log_dir: Path) -> Iterator[str]:
    """`manage.py runserver` and `manage.py db_worker` on `env`'s database, as `make run` starts
    them; yields the site's URL, and stops both. Their output goes to `log_dir` (read on failure)."""
    port = _free_port()
    commands = {
        "web": ["runserver", f"127.0.0.1:{port}", "--noreload", "--nothreading"],
        "worker": ["db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1"],
    }
    started, logs = [], []
    try:
        for name, args in commands.items():
            logs.append(log := (log_dir / f"{name}.log").open("w"))
            command = [sys.executable, "manage.py", *args]
            started.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT))
        wait_for(lambda: _answers(port), 60, "the web server to listen")
        yield f"http://127.0.0.1:{port}"
    finally:
        for process in started:
            process.terminate()
        for process in started:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in logs:
            log.close()
