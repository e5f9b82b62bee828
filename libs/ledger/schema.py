"""Tables plus the database-side guard that makes them append-only.

The guard stops the application and careless hands. It cannot stop a database owner, who can drop a
trigger; the hash chains, the signatures and the signed checkpoints are what catch that afterwards.
In production, grant the ledger's role INSERT and SELECT only.
"""

from __future__ import annotations

from sqlalchemy import Connection, text
from sqlmodel import SQLModel

from libs.ledger.tables import CHECKPOINTS_TABLE, EVENTS_TABLE, LedgerCheckpoint, LedgerEvent

GUARDED_TABLES = (EVENTS_TABLE, CHECKPOINTS_TABLE)
REFUSAL = "modelguard ledger is append-only"

# Passed to psycopg as a statement, so its % placeholders are doubled.
_PG_FUNCTION = f"""
CREATE OR REPLACE FUNCTION modelguard_ledger_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '{REFUSAL}: %% on %% refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END
$$
"""

# Statement-level, so even an UPDATE or DELETE that would touch no row is refused.
_PG_TRIGGER = """
DO $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM pg_trigger WHERE tgname = '{name}' AND tgrelid = '{table}'::regclass
    ) THEN
        CREATE TRIGGER {name} BEFORE {ops} ON {table}
            FOR EACH STATEMENT EXECUTE FUNCTION modelguard_ledger_refuse_change();
    END IF;
END
$$
"""

_SQLITE_TRIGGER = """
CREATE TRIGGER IF NOT EXISTS {name} BEFORE {op} ON {table}
BEGIN
    SELECT RAISE(ABORT, '{refusal}: {op} on {table} refused');
END
"""

# Any 64-bit constant will do; all ledger schema changes and appends take it inside their transaction.
LEDGER_LOCK_KEY = 0x6D675F6C65646772  # "mg_ledgr"


def create_schema(connection: Connection) -> None:
    """Create the tables and the guard; idempotent. Call inside a transaction."""
    dialect = connection.dialect.name
    if dialect == "postgresql":
        # Serialise concurrent first starts: CREATE TABLE IF NOT EXISTS is not race-free in PostgreSQL.
        connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LEDGER_LOCK_KEY})
    SQLModel.metadata.create_all(
        connection,
        tables=[LedgerEvent.__table__, LedgerCheckpoint.__table__],  # type: ignore[attr-defined]
    )
    if dialect == "postgresql":
        connection.exec_driver_sql(_PG_FUNCTION)
        for table in GUARDED_TABLES:
            connection.exec_driver_sql(
                _PG_TRIGGER.format(name=f"{table}_no_change", ops="UPDATE OR DELETE", table=table)
            )
            connection.exec_driver_sql(_PG_TRIGGER.format(name=f"{table}_no_truncate", ops="TRUNCATE", table=table))
    elif dialect == "sqlite":
        # SQLite has no TRUNCATE; its truncate optimisation of DELETE is off when a DELETE trigger exists.
        for table in GUARDED_TABLES:
            for op in ("UPDATE", "DELETE"):
                connection.exec_driver_sql(
                    _SQLITE_TRIGGER.format(name=f"{table}_no_{op.lower()}", op=op, table=table, refusal=REFUSAL)
                )
    else:
        raise ValueError(f"the ledger supports SQLite and PostgreSQL, not {dialect}")
