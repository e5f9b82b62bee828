"""The Operations page: what the services refused (dead letters), the incidents that have not moved, and how the
MCL intake settled DataHub's records. Each read when the page is asked for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from libs.ledger import IncidentProjection
from modelguard.console.dead_letter_view import DeadLetters, dead_letters
from modelguard.console.incident_list import STUCK_AFTER_MIN, incident_list
from modelguard.console.intake_source import IntakeCountsSource
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.console.mcl_intake_counts import IntakeReading


@dataclass(frozen=True)
class QuietIncidents:
    unfinished: int
    stuck: int
    """Unfinished and quiet for ``stuck_after`` minutes or more."""
    stuck_after: int = STUCK_AFTER_MIN


@dataclass(frozen=True)
class OperationsView:
    dead_letters: DeadLetters
    quiet: QuietIncidents
    intake: IntakeReading


def operations_view(
    ledger: ConsoleLedger,
    projections: Mapping[str, IncidentProjection],
    intake: IntakeCountsSource,
    query: Mapping[str, str],
    now: datetime,
) -> OperationsView:
    listing = incident_list(projections, {}, now)
    quiet = QuietIncidents(sum(row.unfinished for row in listing.rows), listing.stuck)
    return OperationsView(dead_letters(ledger.dead_letters, query, projections.keys(), now), quiet, intake.read())
