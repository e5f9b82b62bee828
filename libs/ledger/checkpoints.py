"""Signed checkpoints: the ledger's periodic statement of (position, head hash).

The head hash is the head of a global chain over every event in position order (see
`tables.LedgerCheckpoint`), so a checkpoint pins down the whole ledger up to its position: a removed
tail event or a removed incident, which no per-incident chain can reveal by itself, changes it.

A v2 checkpoint also lists its range, every event after the previous checkpoint as (position, incident id,
sequence, hash), so that a gap or a move found later is named by its incident (see `range_diff`).
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from contracts.envelope import DsseEnvelope
from libs.canonical_json import canonical_bytes, sha256_hex, strict_loads
from libs.ledger.range_diff import Entry, diff_range
from libs.ledger.rows import CheckpointRow
from libs.ledger.store import LedgerStore
from libs.ledger.tables import GENESIS_HASH
from libs.signing.dsse import SignatureError, decode_payload, sign_envelope, verify_envelope
from libs.signing.keys import KeyRegistry, SigningKey

CHECKPOINT_PAYLOAD_TYPE = "application/vnd.modelguard.checkpoint+json"
CHECKPOINT_KIND = "modelguard.ledger.checkpoint.v1"
CHECKPOINT_KIND_V2 = "modelguard.ledger.checkpoint.v2"
LEDGER_SIGNER = "ledger"


@dataclass(frozen=True)
class CheckpointProblem:
    position: int
    what: str
    incident_id: str | None = None

    def line(self) -> str:
        return f"incident {self.incident_id}: {self.what}" if self.incident_id else f"ledger: {self.what}"


@dataclass(frozen=True)
class CheckpointVerification:
    checkpoints_checked: int
    problems: list[CheckpointProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def fold(head: str, event_hash: str) -> str:
    return sha256_hex(bytes.fromhex(head) + bytes.fromhex(event_hash))


def checkpoint_statement(
    position: int,
    event_count: int,
    head_hash: str,
    created_at: datetime,
    after: int | None = None,
    events: list[Entry] | None = None,
) -> dict[str, Any]:
    """The signed statement: v1 without a listing, v2 (what is written now) with `after` and `events`."""
    statement: dict[str, Any] = {
        "kind": CHECKPOINT_KIND if events is None else CHECKPOINT_KIND_V2,
        "position": position,
        "event_count": event_count,
        "head_hash": head_hash,
        "created_at": created_at.astimezone(UTC).isoformat(),
    }
    if events is not None:
        statement["after"] = after or 0
        statement["events"] = [list(e) for e in events]
    return statement


def listing(statement: dict[str, Any]) -> tuple[int, list[Entry]] | None:
    """(after, events) of a v2 statement; None for a v1 statement or a malformed listing."""
    if statement.get("kind") != CHECKPOINT_KIND_V2:
        return None
    after, events = statement.get("after"), statement.get("events")
    if not isinstance(after, int) or not isinstance(events, list):
        return None
    entries: list[Entry] = []
    for e in events:
        if not (isinstance(e, list) and len(e) == 4 and isinstance(e[0], int) and isinstance(e[2], int)):
            return None
        entries.append((e[0], str(e[1]), e[2], str(e[3])))
    return after, entries


class GlobalChain:
    """Folds the ledger's event hashes in position order, from a known (position, count, head)."""

    def __init__(self, store: LedgerStore, position: int = 0, count: int = 0, head: str = GENESIS_HASH) -> None:
        self.store, self.position, self.count, self.head = store, position, count, head

    def advance_to(self, upto: int) -> list[Entry]:
        """Fold on to `upto`; returns the entries folded."""
        folded: list[Entry] = []
        while entries := self.store.range_entries(self.position, upto):
            for entry in entries:
                self.head = fold(self.head, entry[3])
                self.count += 1
                self.position = entry[0]
            folded += entries
        self.position = max(self.position, upto)
        return folded


def write_checkpoint(store: LedgerStore, key: SigningKey, *, now: datetime | None = None) -> CheckpointRow:
    """Sign (position, head hash, the range's listing) at the ledger's current head; returns the existing
    checkpoint when no event arrived since the last one. Folds on from the last checkpoint
    (`verify_checkpoints` re-derives everything from the first event, so a tampered earlier checkpoint
    cannot hide)."""
    upto = store.head_position()
    last = store.latest_checkpoint()
    if last is not None and last.position >= upto:
        return last
    chain = GlobalChain(store, last.position, last.event_count, last.head_hash) if last else GlobalChain(store)
    after = chain.position
    events = chain.advance_to(upto)
    created_at = now or datetime.now(UTC)
    statement = checkpoint_statement(upto, chain.count, chain.head, created_at, after, events)
    envelope = sign_envelope(canonical_bytes(statement), CHECKPOINT_PAYLOAD_TYPE, key)
    return store.add_checkpoint(
        CheckpointRow(
            position=upto,
            event_count=chain.count,
            head_hash=chain.head,
            signer_keyid=key.keyid,
            envelope=canonical_bytes(envelope.model_dump(mode="json")).decode(),
            created_at=created_at,
        )
    )


def verify_checkpoints(
    store: LedgerStore, registry: KeyRegistry, *, signer: str = LEDGER_SIGNER
) -> CheckpointVerification:
    """Check every checkpoint's signature (by a key of `signer`), re-derive its head from the events, and
    compare a v2 checkpoint's listing with the events now held, naming the incident of every difference."""
    checkpoints = store.checkpoints()
    problems: list[CheckpointProblem] = []
    chain, head_position, previous = GlobalChain(store), store.head_position(), 0
    for checkpoint in checkpoints:
        where = f"checkpoint {checkpoint.position}"
        found, statement = statement_problems(checkpoint, registry, signer)
        if checkpoint.position > head_position:
            problems.append(
                CheckpointProblem(checkpoint.position, f"events after position {head_position} missing, {where}")
            )
        listed = listing(statement) if statement is not None else None
        differences = listing_problems(store, checkpoint.position, listed, where) if listed is not None else []
        chain.advance_to(checkpoint.position)
        if (chain.head != checkpoint.head_hash or chain.count != checkpoint.event_count) and not differences:
            found.append(
                f"the events up to here give head {chain.head[:16]}… over {chain.count} events, the checkpoint "
                f"says {checkpoint.head_hash[:16]}… over {checkpoint.event_count}: events were changed, "
                "added or removed"
            )
        signed_head, signed_count = (statement or {}).get("head_hash"), (statement or {}).get("event_count")
        if isinstance(signed_head, str) and isinstance(signed_count, int):
            # judge the next checkpoint on its own range, from this signed head on: one finding per range
            chain.head, chain.count = signed_head, signed_count
        problems += [CheckpointProblem(checkpoint.position, f"{where}: {w}") for w in found] + differences
        if listed is not None and listed[0] > previous:
            problems.append(
                CheckpointProblem(
                    checkpoint.position,
                    f"{where} is signed as following a checkpoint at position {listed[0]}, which the database no "
                    "longer holds: a checkpoint was removed",
                )
            )
        previous = checkpoint.position
    return CheckpointVerification(len(checkpoints), problems)


def listing_problems(
    store: LedgerStore, position: int, listed: tuple[int, list[Entry]], source: str
) -> list[CheckpointProblem]:
    after, entries = listed
    held = store.range_entries(after, position, limit=max(len(entries), 1) * 2 + 5000)
    return [CheckpointProblem(position, d.what, d.incident_id) for d in diff_range(entries, held, source)]


def statement_problems(
    checkpoint: CheckpointRow, registry: KeyRegistry, signer: str = LEDGER_SIGNER
) -> tuple[list[str], dict[str, Any] | None]:
    """What is wrong with a checkpoint's signature and columns, and its signed statement when that verified
    (None otherwise: a listing that did not verify is never used)."""
    try:
        envelope = DsseEnvelope.model_validate(strict_loads(checkpoint.envelope))
        if envelope.payloadType != CHECKPOINT_PAYLOAD_TYPE:
            return [f"envelope payload type is {envelope.payloadType!r}"], None
        verify_envelope(envelope, registry, expected_owner=signer)
        statement = strict_loads(decode_payload(envelope))
    except (ValueError, ValidationError, SignatureError, binascii.Error) as exc:
        return [f"checkpoint envelope rejected: {str(exc)[:300]}"], None
    if not isinstance(statement, dict):
        return ["the signed checkpoint statement is not an object"], None
    found: list[str] = []
    if canonical_bytes(envelope.model_dump(mode="json")).decode() != checkpoint.envelope:
        found.append("stored checkpoint envelope is not in canonical form")
    if checkpoint.signer_keyid not in {s.keyid for s in envelope.signatures}:
        found.append(f"stored signer key {checkpoint.signer_keyid} did not sign the checkpoint")
    expected = checkpoint_statement(
        checkpoint.position, checkpoint.event_count, checkpoint.head_hash, checkpoint.created_at
    )
    expected.pop("kind")
    if statement.get("kind") not in (CHECKPOINT_KIND, CHECKPOINT_KIND_V2):
        found.append(f"signed statement kind {str(statement.get('kind'))[:80]!r} is not a ledger checkpoint")
    for name, value in expected.items():
        if statement.get(name) != value:
            found.append(f"stored {name} {value!r} is not the signed statement's {statement.get(name)!r}")
    if statement.get("kind") == CHECKPOINT_KIND_V2 and listing(statement) is None:
        found.append("the signed listing of the checkpoint's range is malformed")
    return found, statement
