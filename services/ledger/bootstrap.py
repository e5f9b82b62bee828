"""The ledger's composition root: the production ports from Settings (used by ``main.py`` and the CLI's
in-process stack, nothing else)."""

from __future__ import annotations

from libs.bus.runtime import ServiceDefinition
from libs.ledger import LedgerStore
from libs.ledger.external_head import HeadFile, HeadLog, HeadSink
from libs.settings import Settings
from libs.signing.keys import SigningKey
from services.ledger.wiring import LedgerPorts, definition


def production_ports(settings: Settings) -> LedgerPorts:
    store = LedgerStore(settings.ledger_url)
    store.create_schema()
    heads: list[HeadSink] = [HeadFile(settings.ledger_head_path)]
    if settings.ledger_head_log is not None:
        heads.append(HeadLog(settings.ledger_head_log))
    return LedgerPorts(
        store=store,
        heads=tuple(heads),
        checkpoint_interval_s=settings.ledger_checkpoint_interval_s,
        stuck_after_s=settings.stuck_after_s,
    )


def bootstrap(settings: Settings, key: SigningKey) -> ServiceDefinition:
    """The service as its process runs it (``serve``'s builder): the production ports, wired."""
    return definition(production_ports(settings), key)
