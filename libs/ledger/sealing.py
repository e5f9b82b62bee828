"""Sealing a checkpoint: sign it into the database, then hand it to every external head sink."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from libs.ledger.checkpoints import write_checkpoint
from libs.ledger.external_head import HeadSink
from libs.ledger.rows import CheckpointRow
from libs.ledger.store import LedgerStore
from libs.signing.keys import SigningKey


def seal_checkpoint(
    store: LedgerStore, key: SigningKey, sinks: Sequence[HeadSink] = (), *, now: datetime | None = None
) -> CheckpointRow:
    """The database first: an external head never names a checkpoint the database was not given."""
    checkpoint = write_checkpoint(store, key, now=now)
    for sink in sinks:
        sink.record(checkpoint)
    return checkpoint
