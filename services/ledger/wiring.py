"""Wiring of the ledger service: consumes every ModelGuard topic into the append-only store."""

from __future__ import annotations

from sqlalchemy.exc import OperationalError

from contracts.registry import CONTRACTS
from libs.bus.runtime import ServiceDefinition, TransientFailure
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, write_checkpoint
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.ledger.handler import LedgerSink

NAME = "ledger"


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    store = LedgerStore(settings.ledger_url)
    store.create_schema()
    sink = LedgerSink(store, checkpoint=lambda: write_checkpoint(store, key))

    def append(signed: SignedEvent) -> None:
        try:
            sink(signed)
        except OperationalError as exc:  # the database is away: retry, never drop an event
            raise TransientFailure(str(exc)) from exc

    return ServiceDefinition(NAME, MODELGUARD_VERSION, tuple(sorted(CONTRACTS)), sink=append)
