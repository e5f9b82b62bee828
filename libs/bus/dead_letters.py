"""Reading the dead-letter topic: what was refused, by whom, and why."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer

from contracts.registry import DEAD_LETTER_TOPIC
from libs.bus.headers import DLQ_DETAIL, DLQ_REASON, DLQ_SERVICE, DLQ_SOURCE
from libs.bus.kafka_connection import KafkaConnection, connection_to


@dataclass(frozen=True)
class DeadLetter:
    key: str | None
    reason: str
    detail: str
    service: str
    source: str
    value: bytes = b""

    def run_id(self) -> str | None:
        """The CI run of the refused event, read without trusting it (it was refused, after all)."""
        try:
            envelope = json.loads(self.value)
            event = json.loads(base64.b64decode(envelope["payload"]))
            run_id = event["payload"].get("run_id")
        except (ValueError, KeyError, TypeError, AttributeError):
            return None
        return run_id if isinstance(run_id, str) else None


def dead_letter_of(key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes]] | None) -> DeadLetter:
    """One record of the dead-letter topic, as the runtime wrote it (libs.bus.runtime.dead_letter)."""
    named = {k: v.decode(errors="replace") for k, v in (headers or ())}
    return DeadLetter(
        key=key.decode(errors="replace") if key else None,
        reason=named.get(DLQ_REASON, "?"),
        detail=named.get(DLQ_DETAIL, ""),
        service=named.get(DLQ_SERVICE, "?"),
        source=named.get(DLQ_SOURCE, "?"),
        value=value or b"",
    )


async def _read_all(target: KafkaConnection | str, timeout_ms: int) -> list[DeadLetter]:
    consumer = AIOKafkaConsumer(
        DEAD_LETTER_TOPIC, **connection_to(target).client_options(), auto_offset_reset="earliest"
    )
    await consumer.start()
    letters: list[DeadLetter] = []
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=timeout_ms)
            if not batch:
                return letters
            for records in batch.values():
                letters.extend(dead_letter_of(r.key, r.value, r.headers) for r in records)
    finally:
        await consumer.stop()


def read_dead_letters(target: KafkaConnection | str, timeout_ms: int = 500) -> list[DeadLetter]:
    return asyncio.run(_read_all(target, timeout_ms))
