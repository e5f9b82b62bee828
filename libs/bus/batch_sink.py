"""A sink fed a whole consumer poll at a time: one call, one transaction, one offset commit per poll.

For a service whose work per input is a write (the ledger), the cost per message is the transport's, not the
work's: a commit of the offsets, a database commit, a thread hand-off and log lines per message. A batch sink gets
every verified event of a poll (up to `MAX_RECORDS`, after waiting at most `WAIT_MS` for the first) and returns
those it defers; the offsets are committed once, after it returned.

- Malformed and unexpected inputs are dead-lettered after the sink has taken the rest, so a poll that is delivered
  again does not dead-letter them twice (nor one that its partition's rewind will deliver again).
- A deferred event's partition is rewound to it (and that partition's later records come again too: the sink must
  treat what it already took as repeats, as the ledger does); the other partitions move on.
- A TransientFailure rewinds the whole poll, counted against ``delivery.max_attempts`` like any input's (after the
  last attempt every event of the poll is dead-lettered ``retries-exhausted``) unless it counts itself out.
- Any other error is a bug or a bad event: the poll is handed to the sink one event at a time, and only the event
  that fails is dead-lettered (``handler-error``).

A batch sink is idempotent by event id; the service's processed-inputs file is not consulted. Each event the sink
took gets a ``<topic> process`` span in its incident's trace, a child of the span that published it (from the
record's ``traceparent``), spanning the poll's work: a poll holds many incidents, a trace is one incident's.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aiokafka import TopicPartition
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Tracer

from libs.bus.delivery_policy import DeliveryPolicy
from libs.bus.handler_errors import TransientFailure
from libs.bus.processed_inputs import ProcessedInputs
from libs.bus.service_metrics import ServiceMetrics
from libs.events.codec import MalformedMessage, SignedEvent, open_envelope
from libs.observability.log_context import incident_log_context
from libs.signing.keys import KeyRegistry

log = logging.getLogger("modelguard.bus")

BatchSink = Callable[[Sequence[SignedEvent]], Sequence[SignedEvent]]
"""Takes one poll's verified events, returns those it defers (they are delivered again)."""
MAX_RECORDS = 500
WAIT_MS = 100
DEFER_PAUSE_S = 0.1
"""How long a poll that deferred something waits before the next one, so a missing cause is not polled for hot."""


class _Service(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def consumes(self) -> tuple[str, ...]: ...


class BatchRuntime(Protocol):
    """What of the service runtime a batch consumer uses."""

    registry: KeyRegistry
    metrics: ServiceMetrics
    processed: ProcessedInputs
    delivery: DeliveryPolicy

    @property
    def definition(self) -> _Service: ...

    async def dead_letter(self, raw: bytes, reason: str, detail: str, source: str, key: bytes | None) -> None: ...


@dataclass(frozen=True)
class _Input:
    record: Any
    raw: bytes

    @property
    def source(self) -> str:
        return f"{self.record.topic}/{self.record.partition}@{self.record.offset}"


async def consume_batch(
    runtime: BatchRuntime, sink: BatchSink, records: Sequence[Any], consumer: Any, tracer: Tracer
) -> None:
    """One poll through the sink; returns when its offsets may be committed, raises to have it delivered again."""
    inputs = [_Input(r, r.value if isinstance(r.value, bytes) else bytes(r.value or b"")) for r in records]
    verified: list[tuple[_Input, SignedEvent]] = []
    refused: list[tuple[_Input, str, str]] = []
    for item in inputs:
        runtime.metrics.received(item.record.topic)
        try:
            signed = open_envelope(item.raw, runtime.registry)
        except MalformedMessage as exc:
            refused.append((item, exc.reason, exc.detail))
            continue
        if signed.event.meta.event_type not in runtime.definition.consumes:
            refused.append((item, "unexpected-event-type", signed.event.meta.event_type))
            continue
        verified.append((item, signed))
    started, started_ns = time.perf_counter(), time.time_ns()
    events = [signed for _, signed in verified]
    try:
        deferred = await asyncio.to_thread(sink, events) if events else []
    except TransientFailure as exc:
        _measure(runtime, events, time.perf_counter() - started, "retry")
        if await _retry_or_give_up(runtime, inputs, verified, exc):
            raise
        deferred = []
    except Exception:
        log.exception(
            "%s: a poll of %d events failed; handing them over one at a time", runtime.definition.name, len(events)
        )
        deferred = await _one_at_a_time(runtime, sink, verified)
    else:
        _measure(runtime, events, time.perf_counter() - started, "ok")
    held = {s.event.meta.event_id for s in deferred}
    _trace(
        runtime, tracer, [(i, signed) for i, signed in verified if signed.event.meta.event_id not in held], started_ns
    )
    rewound = _rewind(consumer, [item for item, signed in verified if signed.event.meta.event_id in held])
    for item, reason, detail in refused:
        if item.record.offset < rewound.get(_partition(item), item.record.offset + 1):  # else it comes again
            await runtime.dead_letter(item.raw, reason, detail, item.source, item.record.key)
    log.info(
        "%s took %d events (%d deferred, %d dead-lettered) in %.3f s",
        runtime.definition.name,
        len(events) - len(held),
        len(held),
        len(refused),
        time.perf_counter() - started,
    )
    if held:
        await asyncio.sleep(DEFER_PAUSE_S)


async def _retry_or_give_up(
    runtime: BatchRuntime, inputs: list[_Input], verified: list[tuple[_Input, SignedEvent]], exc: Any
) -> bool:
    """Retry the poll (True), or dead-letter its events once it has failed ``delivery.max_attempts`` times."""
    if not exc.counted:
        await asyncio.sleep(exc.retry_after_s)
        return True
    poll = "poll:" + hashlib.sha256("|".join(i.source for i in inputs).encode()).hexdigest()
    failed = runtime.processed.failed_attempt(poll)
    if runtime.delivery.exhausted(failed):
        detail = f"failed {failed} times (delivery.max_attempts {runtime.delivery.max_attempts}); last: {exc}"
        for item, _ in verified:
            await runtime.dead_letter(item.raw, "retries-exhausted", detail, item.source, item.record.key)
        return False
    delay = runtime.delivery.delay(failed, exc.retry_after_s)
    log.info(
        "%s will retry a poll of %d in %.1fs (attempt %d failed): %s",
        runtime.definition.name,
        len(inputs),
        delay,
        failed,
        exc,
    )
    await asyncio.sleep(delay)
    return True


async def _one_at_a_time(
    runtime: BatchRuntime, sink: BatchSink, verified: list[tuple[_Input, SignedEvent]]
) -> list[SignedEvent]:
    deferred: list[SignedEvent] = []
    for item, signed in verified:
        started = time.perf_counter()
        try:
            deferred += await asyncio.to_thread(sink, [signed])
        except TransientFailure:
            raise
        except Exception as error:
            _measure(runtime, [signed], time.perf_counter() - started, "error")
            detail = f"{type(error).__name__}: {error}\n{traceback.format_exc(limit=5)}"
            await runtime.dead_letter(item.raw, "handler-error", detail, item.source, item.record.key)
            continue
        _measure(runtime, [signed], time.perf_counter() - started, "ok")
    return deferred


def _trace(runtime: BatchRuntime, tracer: Tracer, taken: list[tuple[_Input, SignedEvent]], started_ns: int) -> None:
    """A span per event in its incident's trace, and one log line per incident of the poll, inside its trace."""
    ended_ns = time.time_ns()
    named: set[str] = set()
    for item, signed in taken:
        headers = {name: value.decode("utf-8", "replace") for name, value in item.record.headers or ()}
        span = tracer.start_span(
            f"{item.record.topic} process",
            context=propagate.extract(headers),
            kind=SpanKind.CONSUMER,
            attributes={
                "messaging.system": "kafka",
                "messaging.destination.name": item.record.topic,
                "messaging.kafka.message.key": repr(item.record.key),
                "messaging.batch.message_count": len(taken),
            },
            start_time=started_ns,
        )
        meta = signed.event.meta
        if meta.incident_id not in named:
            named.add(meta.incident_id)
            mine = [s.event.meta.event_type for _, s in taken if s.event.meta.incident_id == meta.incident_id]
            run_id = getattr(signed.event.payload, "run_id", None)
            with trace.use_span(span), incident_log_context(meta.incident_id, run_id):
                log.info("%s took %s of incident %s", runtime.definition.name, ", ".join(mine), meta.incident_id)
        span.end(end_time=ended_ns)


def _rewind(consumer: Any, held: list[_Input]) -> dict[TopicPartition, int]:
    """Each partition holding a deferred event is read again from the first of them; where each was rewound to."""
    earliest: dict[TopicPartition, int] = {}
    for item in held:
        partition = _partition(item)
        earliest[partition] = min(item.record.offset, earliest.get(partition, item.record.offset))
    for partition, offset in earliest.items():
        consumer.seek(partition, offset)
    return earliest


def _partition(item: _Input) -> TopicPartition:
    return TopicPartition(item.record.topic, item.record.partition)


def _measure(runtime: BatchRuntime, events: Sequence[SignedEvent], seconds: float, outcome: str) -> None:
    for signed in events:
        runtime.metrics.handled(signed.event.meta.event_type, seconds / max(1, len(events)), outcome)
