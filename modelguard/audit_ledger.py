"""Opening the incident log for an audit command: the one that exists and answers, never a new empty one."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from libs.ledger import LedgerStore


class LedgerUnavailable(LookupError):
    pass


def open_existing_ledger(url: str) -> LedgerStore:
    """The ledger at `url`; raises LedgerUnavailable for an SQLite file that is not there (none is created) or a
    database that does not answer as a ledger."""
    parsed = make_url(url)
    location = parsed.render_as_string(hide_password=True)
    if parsed.get_backend_name() == "sqlite" and not (parsed.database and Path(parsed.database).is_file()):
        raise LedgerUnavailable(f"no ledger at {location}")
    store = LedgerStore(url)
    try:
        store.head_position()
    except SQLAlchemyError as exc:
        store.close()
        driver_error = getattr(exc, "orig", None)  # a DBAPIError carries the driver's own error
        reason = str(driver_error if driver_error is not None else exc).splitlines()[0]
        raise LedgerUnavailable(f"the ledger at {location} does not answer: {reason}") from exc
    return store


def reachable_ledger(url: str) -> LedgerStore | None:
    try:
        return open_existing_ledger(url)
    except LedgerUnavailable:
        return None
