"""One batch of appends planned in memory: which events are new, each new event's link in its incident's chain, and
what each append returns. Pure: the writers (`sqlite_writer`, `core_writer`) read the heads and repeats it needs
and write the rows it plans, in one transaction."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from libs.events.codec import SignedEvent
from libs.ledger.rows import AppendResult
from libs.ledger.tables import GENESIS_HASH

APPEND_COLUMNS = (
    "incident_id",
    "sequence",
    "event_id",
    "event_type",
    "event_version",
    "producer",
    "signer_keyid",
    "causation_id",
    "envelope",
    "envelope_digest",
    "prev_hash",
    "hash",
    "appended_at",
)
"""The columns a writer inserts, in the order of a planned row's values (`position` is the database's)."""

Head = tuple[int, str]
"""(sequence, hash) of an incident's last event."""
Row = tuple[object, ...]


def chain_hash(prev_hash: str, envelope: bytes) -> str:
    """sha256(bytes.fromhex(prev_hash) || envelope): an event's link in its incident's chain."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + envelope).hexdigest()


@dataclass(frozen=True)
class AppendPlan:
    rows: list[Row]
    """The new rows, values in `APPEND_COLUMNS` order."""
    steps: list[int | str]
    """Per event: the index of its new row, or the id of the event it repeats (stored, or earlier in the batch)."""
    heads: dict[str, Head]
    """The batch's incidents' heads once the rows are in."""

    def results(self, positions: Sequence[int], stored: Mapping[str, AppendResult]) -> list[AppendResult]:
        """What each event's append returns, given the positions the database gave the new rows (in row order)."""
        appended = {
            str(row[2]): AppendResult(True, position, int(row[1]), str(row[11]), str(row[2]), str(row[9]))  # type: ignore[call-overload]
            for row, position in zip(self.rows, positions, strict=True)
        }
        return [
            appended[str(self.rows[step][2])]
            if isinstance(step, int)
            else dataclasses.replace(stored.get(step) or appended[step], appended=False)
            for step in self.steps
        ]


def plan_append(
    events: Sequence[SignedEvent], heads: Mapping[str, Head], stored: Collection[str], appended_at: object
) -> AppendPlan:
    """Chain each new event onto its incident's head (`heads`, carried forward through the batch); an event in
    `stored` or earlier in the batch is a repeat. An incident missing from `heads` starts its chain here."""
    rows: list[Row] = []
    steps: list[int | str] = []
    after: dict[str, Head] = {}
    seen: set[str] = set()
    for signed in events:
        meta = signed.event.meta
        if meta.event_id in stored or meta.event_id in seen:
            steps.append(meta.event_id)
            continue
        seen.add(meta.event_id)
        last_sequence, prev_hash = after.get(meta.incident_id) or heads.get(meta.incident_id) or (0, GENESIS_HASH)
        envelope = signed.envelope_bytes
        event_hash = chain_hash(prev_hash, envelope)
        after[meta.incident_id] = (last_sequence + 1, event_hash)
        steps.append(len(rows))
        rows.append(
            (
                meta.incident_id,
                last_sequence + 1,
                meta.event_id,
                meta.event_type,
                meta.event_version,
                meta.producer,
                signed.envelope.signatures[0].keyid,
                meta.causation_id,
                envelope.decode("utf-8"),
                hashlib.sha256(envelope).hexdigest(),
                prev_hash,
                event_hash,
                appended_at,
            )
        )
    return AppendPlan(rows, steps, after)
