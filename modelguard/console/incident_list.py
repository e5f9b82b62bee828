"""The incidents page: one row per projection, newest activity first, filtered by model, outcome and status
(exact values, offered from what the ledger holds)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from libs.ledger import IncidentProjection

FILTERS = ("model", "outcome", "status")
NEVER = datetime.min.replace(tzinfo=UTC)
NO_OUTCOME = "none"
"""The outcome filter's value for incidents nothing has ended yet."""


@dataclass(frozen=True)
class IncidentRow:
    projection: IncidentProjection
    age: str

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


def incident_list(
    projections: Mapping[str, IncidentProjection], query: Mapping[str, str], now: datetime
) -> IncidentList:
    every = sorted(projections.values(), key=lambda p: p.last_at or NEVER, reverse=True)
    options = {name: sorted({_value(p, name) for p in every}) for name in FILTERS}
    chosen = {name: query[name] for name in FILTERS if query.get(name)}
    unknown = [f"no incident has {name} {value!r}" for name, value in chosen.items() if value not in options[name]]
    shown = [p for p in every if all(_value(p, name) == value for name, value in chosen.items())]
    return IncidentList([IncidentRow(p, age(p.first_at, now)) for p in shown], len(every), chosen, options, unknown)


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
