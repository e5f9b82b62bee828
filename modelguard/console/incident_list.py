"""The incidents page: one row per projection, newest activity first, filtered by model, outcome and status
(exact values, offered from what the ledger holds), and by ``quiet``: unfinished incidents (nothing ended them)
whose last event is at least that many minutes old, the ones a phase may have dropped."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from libs.ledger import IncidentProjection

FILTERS = ("model", "outcome", "status")
NEVER = datetime.min.replace(tzinfo=UTC)
NO_OUTCOME = "none"
"""The outcome filter's value for incidents nothing has ended yet."""
STUCK_AFTER_MIN = 10
"""The list names how many unfinished incidents have been quiet this long."""
MAX_QUIET_MIN = 10_000_000


class BadFilter(ValueError):
    pass


@dataclass(frozen=True)
class IncidentRow:
    projection: IncidentProjection
    age: str
    quiet: str
    """How long since its last event."""

    @property
    def unfinished(self) -> bool:
        return self.projection.outcome is None

    @property
    def cause(self) -> str | None:
        p = self.projection
        return p.cause or p.hypothesis


@dataclass(frozen=True)
class IncidentList:
    rows: list[IncidentRow]
    total: int
    chosen: dict[str, str]
    options: dict[str, list[str]]
    unknown: list[str]
    """One line per filter value the ledger holds no incident with."""
    quiet: int | None
    stuck: int
    """Unfinished incidents quiet for STUCK_AFTER_MIN minutes or more."""


def incident_list(
    projections: Mapping[str, IncidentProjection], query: Mapping[str, str], now: datetime
) -> IncidentList:
    every = sorted(projections.values(), key=lambda p: p.last_at or NEVER, reverse=True)
    options = {name: sorted({_value(p, name) for p in every}) for name in FILTERS}
    chosen = {name: query[name] for name in FILTERS if query.get(name)}
    unknown = [f"no incident has {name} {value!r}" for name, value in chosen.items() if value not in options[name]]
    quiet = quiet_minutes(query.get("quiet", ""))
    shown = [p for p in every if all(_value(p, name) == value for name, value in chosen.items())]
    if quiet is not None:
        shown = [p for p in shown if _quiet_for(p, now, quiet)]
    stuck = sum(_quiet_for(p, now, STUCK_AFTER_MIN) for p in every)
    rows = [IncidentRow(p, age(p.first_at, now), age(p.last_at, now)) for p in shown]
    return IncidentList(rows, len(every), chosen, options, unknown, quiet, stuck)


def quiet_minutes(text: str) -> int | None:
    """The ``quiet`` filter: whole minutes, or None when not given. Raises BadFilter with one line."""
    if not text:
        return None
    if not text.isdigit() or int(text) > MAX_QUIET_MIN:
        raise BadFilter(f"quiet takes whole minutes (0 to {MAX_QUIET_MIN}), not {text[:40]!r}")
    return int(text)


def _quiet_for(p: IncidentProjection, now: datetime, minutes: int) -> bool:
    return p.outcome is None and p.last_at is not None and (now - p.last_at).total_seconds() >= minutes * 60


def _value(p: IncidentProjection, name: str) -> str:
    if name == "model":
        return p.model_urn or ""
    if name == "outcome":
        return p.outcome or NO_OUTCOME
    return p.status


def age(since: datetime | None, now: datetime) -> str:
    if since is None:
        return "-"
    seconds = max(0, int((now - since).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"
