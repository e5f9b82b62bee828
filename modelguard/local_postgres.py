"""A throwaway local PostgreSQL cluster for tests and benchmarks, from the installed server binaries.

It lives in a temporary folder, listens on a free loopback port (its socket in that folder too), trusts
local connections, and is stopped and removed afterwards. PostgreSQL refuses to run as root, so under
root the server binaries run as `nobody`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

UNPRIVILEGED_USER = "nobody"
FAST_UNSAFE = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


class PostgresUnavailable(RuntimeError):
    """No local cluster can be started here; the message says why."""


def server_binaries() -> Path | None:
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
        raise PostgresUnavailable("running as root and `runuser` is missing: PostgreSQL will not start as root")
    return ["runuser", "-u", UNPRIVILEGED_USER, "--"]


@contextmanager
def throwaway_cluster(durable: bool = False) -> Iterator[str]:
    """A `postgresql+psycopg://` URL; `durable=False` turns fsync off (fine for tests, not for figures)."""
    bin_dir = server_binaries()
    if bin_dir is None or not (bin_dir / "initdb").exists():
        raise PostgresUnavailable("no PostgreSQL server binaries (initdb, pg_ctl) are installed")
    prefix = _run_as()
    root = Path(tempfile.mkdtemp(prefix="modelguard-pg-"))
    data, log = root / "data", root / "server.log"
    if prefix:
        shutil.chown(root, user=UNPRIVILEGED_USER)
    port = _free_port()
    settings = (f"port={port}", "listen_addresses=127.0.0.1", f"unix_socket_directories={root}")
    options = " ".join(f"-c {o}" for o in (*settings, *(() if durable else FAST_UNSAFE)))

    def run(*argv: str) -> None:
        done = subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            server_log = log.read_text() if log.exists() else ""
            raise PostgresUnavailable(f"{argv[0]} failed: {done.stdout}{done.stderr}{server_log}"[-3000:])

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
