"""Where the services' small state lives: ``MODELGUARD_STATE_URL``.

Unset: the ledger's URL when the ledger is on PostgreSQL (one database for a deployment's durable state),
otherwise SQLite files under each service's state folder in ``MODELGUARD_HOME``, as before. ``sqlite`` keeps
the files even beside a PostgreSQL ledger. A ``postgresql://`` (or ``postgres://``) URL is used through
psycopg 3 (``postgresql+psycopg://``).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

STATE_URL_ENV = "MODELGUARD_STATE_URL"
SQLITE_FILES = "sqlite"
_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


class StateUrlError(ValueError):
    """MODELGUARD_STATE_URL is neither ``sqlite`` nor a PostgreSQL URL; the message says which it was."""


def postgres_url(raw: str) -> str | None:
    """``raw`` as a ``postgresql+psycopg://`` URL when it is a PostgreSQL URL, else None."""
    scheme = raw.split("://", 1)[0].lower() if "://" in raw else ""
    if scheme not in _POSTGRES_SCHEMES:
        return None
    try:
        url = make_url(raw)
    except ArgumentError:
        return None
    return url.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)


def state_url_from(environ: Mapping[str, str], ledger_url: str) -> str | None:
    """The PostgreSQL URL of the state database, or None for SQLite files under the home."""
    raw = environ.get(STATE_URL_ENV, "").strip()
    if raw == "":
        return postgres_url(ledger_url)
    if raw.lower() == SQLITE_FILES:
        return None
    url = postgres_url(raw)
    if url is None:
        shown = raw.split("://", 1)[0] + "://…" if "://" in raw else repr(raw)
        raise StateUrlError(
            f"{STATE_URL_ENV} must be a postgresql:// URL or {SQLITE_FILES!r} (SQLite files under the home), "
            f"got {shown}"
        )
    return url


def redacted(url: str) -> str:
    """The URL with its password hidden, for a log line or an error."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable URL>"
