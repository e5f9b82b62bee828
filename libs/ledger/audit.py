"""`modelguard verify` over the whole ledger: every incident's chain, every checkpoint, the external heads, and
the positions after the last checkpoint; one readable line per finding, naming its incident where it can."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from libs.ledger.checkpoints import CheckpointVerification, verify_checkpoints
from libs.ledger.external_check import check_external_heads
from libs.ledger.external_head import HeadSource
from libs.ledger.store import LedgerStore
from libs.ledger.verify import VerificationReport, verify_all, verify_incident
from libs.signing.keys import KeyRegistry


@dataclass(frozen=True)
class LedgerAudit:
    incidents: list[VerificationReport]
    checkpoints: CheckpointVerification
    findings: list[str] = field(default_factory=list)
    """Every finding as one line; empty when everything held."""

    @property
    def ok(self) -> bool:
        return not self.findings


def audit_ledger(
    store: LedgerStore,
    registry: KeyRegistry,
    heads: Sequence[HeadSource] = (),
    incident_id: str | None = None,
) -> LedgerAudit:
    reports = [verify_incident(store, incident_id, registry)] if incident_id else verify_all(store, registry)
    checkpoints = verify_checkpoints(store, registry)
    findings = [
        f"incident {r.incident_id}: position {p.position} {p.event_type} {p.event_id}: {p.what}"
        for r in reports
        for p in r.problems
    ]
    problems = [*checkpoints.problems, *check_external_heads(store, registry, heads)]
    findings += [p.line() for p in problems if incident_id is None or p.incident_id in (None, incident_id)]
    if incident_id is None:
        findings += uncheckpointed_gaps(store)
    return LedgerAudit(reports, checkpoints, list(dict.fromkeys(findings)))


def uncheckpointed_gaps(store: LedgerStore) -> list[str]:
    """Positions missing after the last checkpoint, named by the incidents of the events either side.

    Positions are handed out one by one under the writers' lock, so a hole is a removed event (or, in
    PostgreSQL, an append whose transaction failed after taking its position)."""
    last = store.latest_checkpoint()
    after, ends = (last.position if last else 0), store.head_position()
    entries = store.range_entries(after, ends, limit=max(ends - after, 1))
    found: list[str] = []
    previous: tuple[int, str | None, int] = (after, None, 0)
    for position, incident, sequence, _hash in entries:
        if position > previous[0] + 1:
            before = f"incident {previous[1]} event {previous[2]}" if previous[1] else f"checkpoint {after}"
            missing = f"{previous[0] + 1}" if position == previous[0] + 2 else f"{previous[0] + 1}..{position - 1}"
            found.append(
                f"ledger: position {missing} missing after the last checkpoint, between {before} and incident "
                f"{incident} event {sequence}: the incident of a removed event is one of these or unknown"
            )
        previous = (position, incident, sequence)
    return found
