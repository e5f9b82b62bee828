"""What the console reads: the ledger it was started on (and the dead letters kept beside it), its public keys, and
the deployment's artifact store."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from contracts.registry import Event
from libs.artifacts.store import ArtifactStore
from libs.events.codec import MalformedMessage
from libs.ledger import IncidentProjection, LedgerRow, LedgerStore, decode_row, replay
from libs.operations.dead_letter_store import DeadLetterStore
from libs.signing.keys import KeyRegistry


@dataclass(frozen=True)
class ConsoleLedger:
    store: LedgerStore
    registry: KeyRegistry
    artifact_store: ArtifactStore

    def projections(self) -> tuple[dict[str, IncidentProjection], str | None]:
        """Every incident rebuilt by replay, each signature checked. When one fails, the projections decoded
        without the checks and the failure, so the reader can still find the incident (MalformedMessage when a
        row does not even decode)."""
        try:
            return replay(self.store, self.registry), None
        except MalformedMessage as exc:
            return replay(self.store), str(exc)

    def rows(self, incident_id: str) -> list[LedgerRow]:
        return self.store.incident_events(incident_id)

    @cached_property
    def dead_letters(self) -> DeadLetterStore:
        """The dead letters the ledger service keeps in the same database (unsigned; never created from here)."""
        return DeadLetterStore(self.store.url)

    def artifacts(self) -> ArtifactStore:
        return self.artifact_store


def verified_event(row: LedgerRow, registry: KeyRegistry) -> Event[Any] | None:
    """The row's event when its envelope opens with a registered key of its producer, else None."""
    try:
        return decode_row(row, registry)
    except MalformedMessage:
        return None
