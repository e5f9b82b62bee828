"""Which PostgreSQL server a test talks to: a URL in MODELGUARD_TEST_POSTGRES_URL, a testcontainers
PostgreSQL when a Docker engine answers, a throwaway local cluster when the server binaries are
installed; otherwise the test is skipped with the reason.

The throwaway cluster lives in a temporary folder, listens on a free loopback port (its socket in that
folder too), trusts local connections, and is stopped and removed afterwards. PostgreSQL refuses to run
as root, so under root the server binaries run as `nobody`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from tests.support.broker import docker_answers

ENV_URL = "MODELGUARD_TEST_POSTGRES_URL"
UNPRIVILEGED_USER = "nobody"
FAST_UNSAFE = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


@contextmanager
def postgres_server() -> Iterator[str]:
    """A `postgresql+psycopg://` URL of a server to test against."""
    external = os.environ.get(ENV_URL)
    if external:
        yield external
        return
    if docker_answers():
        from testcontainers.postgres import PostgresContainer

        with PostgresContainer("postgres:15-alpine", driver="psycopg") as container:
            yield container.get_connection_url()
        return
    with throwaway_cluster() as url:
        yield url


@contextmanager
def fresh_schema(server_url: str) -> Iterator[str]:
    """The server URL with its own new schema first on the search path; the schema is dropped after."""
    schema = f"mg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(libpq_url(server_url), autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield (
            make_url(server_url)
            .update_query_dict({"options": f"-csearch_path={schema}"})
            .render_as_string(hide_password=False)
        )
    finally:
        with psycopg.connect(libpq_url(server_url), autocommit=True) as connection:
            connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


def libpq_url(url: str) -> str:
    """A SQLAlchemy URL as a conninfo URI psycopg understands."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _server_binaries() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"), reverse=True)
    return versions[0].parent if versions else None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser") is None:
        pytest.skip("running as root and `runuser` is missing: PostgreSQL will not start as root")
    return ["runuser", "-u", UNPRIVILEGED_USER, "--"]


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    bin_dir = _server_binaries()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        pytest.skip(f"no PostgreSQL: set {ENV_URL}, run Docker, or install the server binaries (initdb, pg_ctl)")
    prefix = _run_as()
    root = Path(tempfile.mkdtemp(prefix="modelguard-pg-"))
    data, log = root / "data", root / "server.log"
    if prefix:
        shutil.chown(root, user=UNPRIVILEGED_USER)
    port = _free_port()
    options = " ".join(
        f"-c {o}"
        for o in (f"port={port}", "listen_addresses=127.0.0.1", f"unix_socket_directories={root}", *FAST_UNSAFE)
    )

    def run(*argv: str) -> None:
        done = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            server_log = log.read_text() if log.exists() else ""
            raise RuntimeError(f"{argv[0]} failed: {done.stdout}{done.stderr}{server_log}"[-3000:])

    try:
        initdb = ("-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-locale", "--no-sync")
        run(str(bin_dir / "initdb"), "-D", str(data), *initdb)
        run(str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w", "-t", "60", "start")
        try:
            yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        finally:
            run(str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)
