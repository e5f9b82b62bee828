"""One batch of appends planned in memory: which events are new, each new event's link in its incident's chain, and
what each append returns. Pure: the writers (`sqlite_writer`, `core_writer`) read the heads and repeats it needs
and write the rows it plans, in one transaction."""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from libs.events.codec import SignedEvent
from libs.ledger.chain_links import link_hash
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


_NEW_CHAIN: Head = (0, GENESIS_HASH)


@dataclass(frozen=True)
class AppendPlan:
    rows: list[Row]
    """The new rows, values in `APPEND_COLUMNS` order."""
    steps: list[int | str]
    """Per event: the index of its new row, or the id of the event it repeats (stored, or earlier in the batch)."""

    def results(self, positions: Sequence[int], stored: Mapping[str, AppendResult]) -> list[AppendResult]:
        """What each event's append returns, given the positions the database gave the new rows (in row order)."""
        rows = self.rows
        if len(rows) == len(self.steps):  # no repeat: each event is its row, in order
            return [
                AppendResult(True, position, row[1], row[11], row[2], row[9])  # type: ignore[arg-type]
                for position, row in zip(positions, rows, strict=True)
            ]
        results: list[AppendResult] = []
        appended: dict[str, AppendResult] = {}
        for step in self.steps:
            if isinstance(step, int):
                row = self.rows[step]
                result = AppendResult(True, positions[step], row[1], row[11], row[2], row[9])  # type: ignore[arg-type]
                appended[result.event_id] = result
            else:  # a repeat of an earlier event of the batch, or of a stored one
                result = (appended.get(step) or stored[step])._replace(appended=False)
            results.append(result)
        return results


def plan_append(
    events: Sequence[SignedEvent], heads: dict[str, Head], stored: Collection[str], appended_at: object
) -> AppendPlan:
    """Chain each new event onto its incident's head; an event in `stored` or earlier in the batch is a repeat.
    `heads` is carried forward in place: afterwards it holds each incident's head once the rows are in. An incident
    missing from it starts its chain here."""
    rows: list[Row] = []
    steps: list[int | str] = []
    seen: set[str] = set()
    sha256 = hashlib.sha256
    for signed in events:
        meta = signed.event.meta
        event_id, incident = meta.event_id, meta.incident_id
        if event_id in seen or event_id in stored:
            steps.append(event_id)
            continue
        seen.add(event_id)
        sequence, prev_hash = heads.get(incident, _NEW_CHAIN)
        envelope = signed.envelope_bytes
        digest = sha256(envelope).digest()
        event_hash = link_hash(prev_hash, digest)
        sequence += 1
        heads[incident] = (sequence, event_hash)
        steps.append(len(rows))
        rows.append(
            (
                incident,
                sequence,
                event_id,
                meta.event_type,
                meta.event_version,
                meta.producer,
                signed.envelope.signatures[0].keyid,
                meta.causation_id,
                envelope.decode("utf-8"),
                digest.hex(),
                prev_hash,
                event_hash,
                appended_at,
            )
        )
    return AppendPlan(rows, steps)
