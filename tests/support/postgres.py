"""Which PostgreSQL server a test talks to: a URL in MODELGUARD_TEST_POSTGRES_URL, a testcontainers
PostgreSQL when a Docker engine answers, a throwaway local cluster (modelguard.local_postgres) when the
server binaries are installed; otherwise the test is skipped with the reason.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest
from sqlalchemy.engine import make_url

from modelguard.local_postgres import PostgresUnavailable
from modelguard.local_postgres import throwaway_cluster as local_throwaway_cluster
from tests.support.broker import docker_answers

ENV_URL = "MODELGUARD_TEST_POSTGRES_URL"


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


@contextmanager
def throwaway_cluster() -> Iterator[str]:
    try:
        with local_throwaway_cluster() as url:
            yield url
    except PostgresUnavailable as exc:
        pytest.skip(f"no PostgreSQL: set {ENV_URL}, run Docker, or install the server binaries ({exc})")
