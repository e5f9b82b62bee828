"""Signed checkpoints: the ledger's periodic statement of (position, head hash).

The head hash is the head of a global chain over every event in position order (see
`tables.LedgerCheckpoint`), so a checkpoint pins down the whole ledger up to its position: a removed
tail event or a removed incident, which no per-incident chain can reveal by itself, changes it.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from contracts.envelope import DsseEnvelope
from libs.canonical_json import canonical_bytes, sha256_hex, strict_loads
from libs.ledger.rows import CheckpointRow
from libs.ledger.store import LedgerStore
from libs.ledger.tables import GENESIS_HASH
from libs.signing.dsse import SignatureError, decode_payload, sign_envelope, verify_envelope
from libs.signing.keys import KeyRegistry, SigningKey

CHECKPOINT_PAYLOAD_TYPE = "application/vnd.modelguard.checkpoint+json"
CHECKPOINT_KIND = "modelguard.ledger.checkpoint.v1"
LEDGER_SIGNER = "ledger"


@dataclass(frozen=True)
class CheckpointProblem:
    position: int
    what: str


@dataclass(frozen=True)
class CheckpointVerification:
    checkpoints_checked: int
    problems: list[CheckpointProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def fold(head: str, event_hash: str) -> str:
    return sha256_hex(bytes.fromhex(head) + bytes.fromhex(event_hash))


def checkpoint_statement(position: int, event_count: int, head_hash: str, created_at: datetime) -> dict[str, Any]:
    return {
        "kind": CHECKPOINT_KIND,
        "position": position,
        "event_count": event_count,
        "head_hash": head_hash,
        "created_at": created_at.astimezone(UTC).isoformat(),
    }


class _GlobalChain:
    """Folds the ledger's event hashes in position order, from a known (position, count, head)."""

    def __init__(self, store: LedgerStore, position: int = 0, count: int = 0, head: str = GENESIS_HASH) -> None:
        self.store, self.position, self.count, self.head = store, position, count, head

    def advance_to(self, upto: int) -> None:
        while links := self.store.chain_links_after(self.position, upto):
            for position, event_hash in links:
                self.head = fold(self.head, event_hash)
                self.count += 1
                self.position = position
        self.position = max(self.position, upto)


def write_checkpoint(store: LedgerStore, key: SigningKey, *, now: datetime | None = None) -> CheckpointRow:
    """Sign (position, head hash) at the ledger's current head; returns the existing checkpoint when no
    event arrived since the last one. Folds on from the last checkpoint (`verify_checkpoints` re-derives
    everything from the first event, so a tampered earlier checkpoint cannot hide)."""
    upto = store.head_position()
    last = store.latest_checkpoint()
    if last is not None and last.position >= upto:
        return last
    chain = _GlobalChain(store, last.position, last.event_count, last.head_hash) if last else _GlobalChain(store)
    chain.advance_to(upto)
    created_at = now or datetime.now(UTC)
    statement = checkpoint_statement(upto, chain.count, chain.head, created_at)
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
    """Check every checkpoint's signature (by a key of `signer`) and re-derive its head from the events."""
    checkpoints = store.checkpoints()
    problems: list[CheckpointProblem] = []
    chain, head_position = _GlobalChain(store), store.head_position()
    for checkpoint in checkpoints:
        found = _statement_problems(checkpoint, registry, signer)
        if checkpoint.position > head_position:
            found.append(f"the ledger ends at position {head_position}: events after it were removed")
        chain.advance_to(checkpoint.position)
        if chain.head != checkpoint.head_hash or chain.count != checkpoint.event_count:
            found.append(
                f"the events up to here give head {chain.head[:16]}… over {chain.count} events, the checkpoint "
                f"says {checkpoint.head_hash[:16]}… over {checkpoint.event_count}: events were changed, "
                "added or removed"
            )
        problems += [CheckpointProblem(checkpoint.position, w) for w in found]
    return CheckpointVerification(len(checkpoints), problems)


def _statement_problems(checkpoint: CheckpointRow, registry: KeyRegistry, signer: str) -> list[str]:
    try:
        envelope = DsseEnvelope.model_validate(strict_loads(checkpoint.envelope))
        if envelope.payloadType != CHECKPOINT_PAYLOAD_TYPE:
            return [f"envelope payload type is {envelope.payloadType!r}"]
        verify_envelope(envelope, registry, expected_owner=signer)
        statement = strict_loads(decode_payload(envelope))
    except (ValueError, ValidationError, SignatureError, binascii.Error) as exc:
        return [f"checkpoint envelope rejected: {str(exc)[:300]}"]
    found: list[str] = []
    if canonical_bytes(envelope.model_dump(mode="json")).decode() != checkpoint.envelope:
        found.append("stored checkpoint envelope is not in canonical form")
    if checkpoint.signer_keyid not in {s.keyid for s in envelope.signatures}:
        found.append(f"stored signer key {checkpoint.signer_keyid} did not sign the checkpoint")
    expected = checkpoint_statement(
        checkpoint.position, checkpoint.event_count, checkpoint.head_hash, checkpoint.created_at
    )
    for name, value in expected.items():
        if not isinstance(statement, dict) or statement.get(name) != value:
            got = statement.get(name) if isinstance(statement, dict) else None
            found.append(f"stored {name} {value!r} is not the signed statement's {got!r}")
    return found
