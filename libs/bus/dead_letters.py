"""Reading the dead-letter topic: what was refused, by whom, and why."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass

from aiokafka import AIOKafkaConsumer

from contracts.registry import DEAD_LETTER_TOPIC
from libs.bus.headers import DLQ_DETAIL, DLQ_REASON, DLQ_SERVICE, DLQ_SOURCE


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


async def _read_all(bootstrap: str, timeout_ms: int) -> list[DeadLetter]:
    consumer = AIOKafkaConsumer(DEAD_LETTER_TOPIC, bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    await consumer.start()
    letters: list[DeadLetter] = []
    try:
        while True:
            batch = await consumer.getmany(timeout_ms=timeout_ms)
            if not batch:
                return letters
            for records in batch.values():
                for r in records:
                    headers = {k: v.decode(errors="replace") for k, v in (r.headers or ())}
                    letters.append(
                        DeadLetter(
                            key=r.key.decode(errors="replace") if r.key else None,
                            reason=headers.get(DLQ_REASON, "?"),
                            detail=headers.get(DLQ_DETAIL, ""),
                            service=headers.get(DLQ_SERVICE, "?"),
                            source=headers.get(DLQ_SOURCE, "?"),
                            value=r.value or b"",
                        )
                    )
    finally:
        await consumer.stop()


def read_dead_letters(bootstrap: str, timeout_ms: int = 500) -> list[DeadLetter]:
    return asyncio.run(_read_all(bootstrap, timeout_ms))
