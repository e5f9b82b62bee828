"""The shared adapter: every service's stores in one PostgreSQL database, each table named for its service
(``state_<service>_<table>``), so every replica of a service reads and writes the same rows. A claim is one
``INSERT … ON CONFLICT DO UPDATE … WHERE … RETURNING``: PostgreSQL locks the conflicting row and decides on its
latest committed version, so two replicas never both win it."""

from __future__ import annotations

import re
from functools import cache

from sqlalchemy import Engine, create_engine

from libs.state.location import redacted
from libs.state.port import StateSchema
from libs.state.sql_tables import EngineTables

POSTGRES_NOW = "extract(epoch from clock_timestamp())::double precision"
SCHEMA_LOCK = "SELECT pg_advisory_xact_lock(hashtext('modelguard.state.schema'))"
"""Replicas starting together create the same tables; CREATE … IF NOT EXISTS alone can race in the catalog."""
_SERVICE = re.compile(r"[a-z][a-z0-9_]*")


@cache
def postgres_engine(url: str) -> Engine:
    """One small pool per process and URL, shared by the process's stores."""
    return create_engine(url, pool_pre_ping=True, pool_size=2, max_overflow=6)


def table_prefix(service: str) -> str:
    name = service.replace("-", "_")
    if not _SERVICE.fullmatch(name):
        raise ValueError(f"not a service name for state tables: {service!r}")
    return f"state_{name}_"


class PostgresState:
    def __init__(self, url: str) -> None:
        self.url = url
        self._engine = postgres_engine(url)

    def tables(self, service: str, schema: StateSchema) -> EngineTables:
        prefix = table_prefix(service)
        tables = EngineTables(
            self._engine,
            "postgresql",
            {name: prefix + name for name in schema.tables},
            POSTGRES_NOW,
            owns_engine=False,
        )
        tables.create(schema.statements_for("postgresql"), lock=SCHEMA_LOCK)
        return tables

    def describe(self) -> str:
        return f"PostgreSQL at {redacted(self.url)}"
