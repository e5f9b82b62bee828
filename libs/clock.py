"""The clock port: what a service stamps its events' ``occurred_at`` with. Production reads the system clock in
UTC; a test hands a fixed one to its composition root, so the events it asserts on are the same on every run."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The system clock, in UTC (the production clock of every service)."""
    return datetime.now(UTC)
