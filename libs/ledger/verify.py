"""Audit: re-derive every hash, signature and causal link of an incident from its stored envelopes.

Nothing stored is trusted: each row's columns are checked against the signed event they claim to
describe, and each event is named when something about it does not hold.

The whole ledger is checked in batches of incidents, each batch read in a few statements; from
`PARALLEL_FROM` events on, the batches are checked in one process per core (a signature check is CPU work that
holds the interpreter): this one and helpers it starts, each reading the batches it takes (`verify_pool`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from libs.events.codec import MalformedMessage, SignedEvent, open_envelope
from libs.ledger.chain_links import LinkFormat, link_format
from libs.ledger.rows import IncidentHead, LedgerRow
from libs.ledger.store import LedgerStore
from libs.ledger.tables import GENESIS_HASH
from libs.signing.keys import KeyRegistry

PARALLEL_FROM = 2_000
"""Events from which `verify_all` checks in several processes; below, starting them costs more than it saves."""
BATCH_EVENTS = 500
"""About how many events one batch of incidents holds."""
POOL_BATCH_EVENTS = 100
"""Smaller batches across processes, so that they finish together."""


@dataclass(frozen=True)
class Problem:
    position: int
    sequence: int
    event_id: str
    event_type: str
    what: str
    check: str = ""
    """Which check found it: "chain" (sequence, hashes, positions), "signature", "content" (stored columns
    against the signed event) or "causal" (causation and input digests)."""


@dataclass(frozen=True)
class VerificationReport:
    incident_id: str
    events_checked: int
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_incident(store: LedgerStore, incident_id: str, registry: KeyRegistry) -> VerificationReport:
    return _report(incident_id, store.incident_events(incident_id), registry)


def verify_all(store: LedgerStore, registry: KeyRegistry, *, workers: int | None = None) -> list[VerificationReport]:
    """One report per incident in the ledger, oldest activity first. `workers`: processes to check in (default:
    one per core from `PARALLEL_FROM` events on, else this process alone)."""
    heads = store.incidents()
    if workers is None:
        workers = (os.cpu_count() or 1) if sum(h.sequence for h in heads) >= PARALLEL_FROM else 1
    if workers > 1 and len(heads) > 1:
        from libs.ledger.verify_pool import verify_in_pool

        return verify_in_pool(store, registry, incident_batches(heads, POOL_BATCH_EVENTS), workers)
    return [report for batch in incident_batches(heads) for report in verify_batch(store, batch, registry)]


def incident_batches(heads: Sequence[IncidentHead], events: int = BATCH_EVENTS) -> list[list[str]]:
    """The incidents in order, cut into batches of about `events` events (an incident's count is its head's
    sequence)."""
    batches: list[list[str]] = [[]]
    held = 0
    for head in heads:
        if held >= events:
            batches.append([])
            held = 0
        batches[-1].append(head.incident_id)
        held += head.sequence
    return [b for b in batches if b]


def verify_batch(store: LedgerStore, incident_ids: Sequence[str], registry: KeyRegistry) -> list[VerificationReport]:
    rows = store.incidents_events(incident_ids)
    return [_report(incident, rows[incident], registry) for incident in incident_ids]


def _report(incident_id: str, rows: Sequence[LedgerRow], registry: KeyRegistry) -> VerificationReport:
    if not rows:
        return VerificationReport(incident_id, 0, [Problem(0, 0, "", "", "the ledger holds no event of this incident")])
    return VerificationReport(incident_id, len(rows), check_incident(rows, registry))


def check_incident(rows: Sequence[LedgerRow], registry: KeyRegistry) -> list[Problem]:
    """Every problem of one incident's rows, given in sequence order."""
    problems: list[Problem] = []
    by_digest = {r.envelope_digest: r for r in rows}
    earlier: dict[str, LedgerRow] = {}
    expected_sequence, expected_prev, previous_position = 1, GENESIS_HASH, 0
    formats: set[LinkFormat] = set()
    for row in rows:
        raw = row.envelope_bytes  # encoded once: every check below reads it
        found = [("chain", w) for w in _link_problems(row, raw, expected_sequence, expected_prev, formats)]
        if row.position <= previous_position:
            found.append(
                (
                    "chain",
                    f"sequence {row.sequence} is at position {row.position}, before the event it follows (position "
                    f"{previous_position}): positions were reordered",
                )
            )
        signed, reason = _open(raw, registry)
        if reason:
            found.append(("signature", reason))
        if signed is not None:
            found += [("content", w) for w in _content_problems(row, raw, signed)]
            found += [("causal", w) for w in _causal_problems(row, signed, earlier, by_digest)]
        if row.event_id in earlier:
            found.append(("chain", f"event_id {row.event_id} appears twice in the incident"))
        problems += [Problem(row.position, row.sequence, row.event_id, row.event_type, w, c) for c, w in found]
        earlier.setdefault(row.event_id, row)
        expected_sequence, expected_prev, previous_position = row.sequence + 1, row.hash, row.position
    return problems


def _link_problems(
    row: LedgerRow, raw: bytes, expected_sequence: int, expected_prev: str, formats: set[LinkFormat]
) -> list[str]:
    """`formats`: the link formats of the incident's rows so far, carried from row to row (`chain_links`)."""
    found: list[str] = []
    if row.sequence != expected_sequence:
        found.append(f"sequence {row.sequence} where {expected_sequence} was expected: an event is missing or extra")
    if row.prev_hash != expected_prev:
        found.append("prev_hash does not equal the hash of the event before it")
    digest = hashlib.sha256(raw).digest()
    kind = link_format(row.prev_hash, digest, raw, row.hash)
    if kind is None:
        found.append("hash is not sha256(prev_hash || sha256(envelope)): the stored envelope or hash was changed")
    elif kind is LinkFormat.OVER_ENVELOPE and LinkFormat.OVER_DIGEST in formats:
        found.append(
            "hash is sha256(prev_hash || envelope), the format of rows appended before 2026-12-05, after a link of "
            "the current format: a chain never goes back to the old format"
        )
    if kind is not None:
        formats.add(kind)
    if digest.hex() != row.envelope_digest:
        found.append("envelope_digest is not the sha256 of the stored envelope")
    return found


def _open(raw: bytes, registry: KeyRegistry) -> tuple[SignedEvent | None, str]:
    try:
        return open_envelope(raw, registry), ""
    except MalformedMessage as exc:
        return None, f"envelope rejected ({exc.reason}): {exc.detail}"


def _content_problems(row: LedgerRow, raw: bytes, signed: SignedEvent) -> list[str]:
    meta = signed.event.meta
    held = (row.event_id, row.event_type, row.event_version, row.incident_id, row.producer, row.causation_id)
    signed_as = (meta.event_id, meta.event_type, meta.event_version, meta.incident_id, meta.producer, meta.causation_id)
    keyids = [s.keyid for s in signed.envelope.signatures]
    if held == signed_as and signed.envelope_bytes == raw and row.signer_keyid in keyids:
        return []  # the common case, checked without building a message
    stored: dict[str, Any] = {
        "event_id": row.event_id,
        "event_type": row.event_type,
        "event_version": row.event_version,
        "incident_id": row.incident_id,
        "producer": row.producer,
        "causation_id": row.causation_id,
    }
    found = [
        f"stored {name} {value!r} is not the signed event's {getattr(meta, name)!r}"
        for name, value in stored.items()
        if getattr(meta, name) != value
    ]
    if signed.envelope_bytes != raw:
        found.append("stored envelope is not in canonical form")
    if row.signer_keyid not in keyids:
        found.append(f"stored signer key {row.signer_keyid} did not sign the envelope")
    return found


def _causal_problems(
    row: LedgerRow, signed: SignedEvent, earlier: dict[str, LedgerRow], by_digest: dict[str, LedgerRow]
) -> list[str]:
    meta, found = signed.event.meta, []
    cause_id = meta.causation_id
    if cause_id is not None:
        cause = earlier.get(cause_id)
        if cause is None:
            found.append(f"causation_id {cause_id} names no earlier event of this incident")
        elif cause.envelope_digest not in meta.input_digests:
            found.append(
                f"input digests do not include the ledger's envelope of its cause {cause_id}: "
                "it was computed from an envelope the ledger does not hold"
            )
    for digest in meta.input_digests:
        named = by_digest.get(digest)
        if named is not None and named.sequence >= row.sequence:
            found.append(f"input digest {digest[:16]}… names a later event of this incident ({named.event_id})")
    return found
