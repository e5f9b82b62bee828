"""The online check: every event an attestation names is in the incident log, verifies, and sits in causal order."""

from __future__ import annotations

from dataclasses import dataclass, field

from contracts.events.publication import Published
from libs.attestation.attest import Attestation
from libs.attestation.predicate import ChainLink, IncidentPredicate
from libs.attestation.verify import AttestationCheck
from libs.events.codec import MalformedMessage, open_envelope
from libs.ledger.rows import LedgerRow
from libs.ledger.store import LedgerStore
from libs.signing.keys import KeyRegistry


@dataclass(frozen=True)
class LedgerLink:
    """A chain digest followed back to its row in the ledger."""

    digest: str
    position: int
    event_id: str
    event_type: str


@dataclass(frozen=True)
class LedgerCrossCheck:
    chain_length: int
    links: list[LedgerLink] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    published_by: str | None = None
    """The id of the Published event that names this attestation, when the ledger holds one."""

    @property
    def ok(self) -> bool:
        return not self.problems and len(self.links) == self.chain_length


def cross_check(
    attestation: Attestation | AttestationCheck, store: LedgerStore, registry: KeyRegistry
) -> LedgerCrossCheck:
    """Follow every chain digest of a (verified) attestation back to the ledger and check what is found there."""
    predicate = _predicate_of(attestation)
    if predicate is None:
        return LedgerCrossCheck(0, problems=["the attestation did not verify; there is no chain to follow"])
    links: list[LedgerLink] = []
    problems: list[str] = []
    for index, link in enumerate(predicate.chain, start=1):
        row = store.event_with_digest(link.digest, predicate.incident_id)
        if row is None:
            problems.append(f"chain event {index} (sha256 {link.digest[:16]}..) is not in the ledger")
            continue
        problems += _row_problems(index, link, row, predicate.incident_id, registry)
        if links and row.position <= links[-1].position:
            problems.append(f"chain event {index} ({row.event_type}) was logged before the event it follows")
        links.append(LedgerLink(link.digest, row.position, row.event_id, row.event_type))
    return LedgerCrossCheck(
        len(predicate.chain), links, problems, _published_by(store, predicate.incident_id, attestation.digest, registry)
    )


def _predicate_of(attestation: Attestation | AttestationCheck) -> IncidentPredicate | None:
    if isinstance(attestation, AttestationCheck):
        return attestation.predicate if attestation.ok else None
    return IncidentPredicate.model_validate(attestation.statement["predicate"])


def _row_problems(index: int, link: ChainLink, row: LedgerRow, incident_id: str, registry: KeyRegistry) -> list[str]:
    where = f"chain event {index} ({row.event_type} {row.event_id} at position {row.position})"
    problems: list[str] = []
    try:
        open_envelope(row.envelope_bytes, registry)
    except MalformedMessage as exc:
        problems.append(f"{where} does not verify in the ledger: {exc.reason}")
    if row.incident_id != incident_id:
        problems.append(f"{where} belongs to incident {row.incident_id}, not {incident_id}")
    if link.event_id is not None and link.event_id != row.event_id:
        problems.append(f"{where} is attested as event {link.event_id}")
    if link.event_type is not None and link.event_type != row.event_type:
        problems.append(f"{where} is attested as a {link.event_type}")
    return problems


def _published_by(store: LedgerStore, incident_id: str, digest: str, registry: KeyRegistry) -> str | None:
    for row in store.incident_events(incident_id):
        if row.event_type != "Published":
            continue
        try:
            payload = open_envelope(row.envelope_bytes, registry).event.payload
        except MalformedMessage:
            continue
        if isinstance(payload, Published) and payload.attestation is not None and payload.attestation.sha256 == digest:
            return row.event_id
    return None
