"""The thin transport around a service's plain handler: consume, verify, dedupe, handle, sign, publish.

A handler is a plain function from one verified input event to the payloads of its output events. This
module is the only place that knows about Kafka, envelopes on the wire, dead letters and offsets. Its brokers come
from a ``BrokerFactory``: ``make_broker`` (Kafka), or ``libs.bus.in_memory_broker.in_memory_brokers`` (an in-memory
cluster, for ``modelguard investigate``): everything from the bytes read to the bytes published is this code.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sys
import time
import traceback
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from aiokafka import AIOKafkaConsumer
from aiokafka import TopicPartition as AIOTopicPartition
from aiokafka.errors import IllegalStateError, KafkaConnectionError
from faststream import AckPolicy, FastStream
from faststream.kafka import KafkaBroker
from faststream.kafka.annotations import KafkaMessage
from faststream.kafka.opentelemetry import KafkaTelemetryMiddleware
from opentelemetry import trace
from prometheus_client.registry import Collector
from pydantic import BaseModel

from contracts.meta import EventMeta
from contracts.registry import DEAD_LETTER_TOPIC, contract_for, contract_of_payload
from contracts.service_channels import ServiceChannels
from libs.bus.batch_sink import MAX_RECORDS, WAIT_MS, BatchSink, consume_batch
from libs.bus.broker_loss import watch_for_broker_loss
from libs.bus.broker_reachability import watch_reachability
from libs.bus.commit_behind import CommitBehind
from libs.bus.consumer_lag import sample_lag_forever
from libs.bus.consumer_stop import stop_subscriber
from libs.bus.delivery_policy import DeliveryPolicyError, default_delivery_policy
from libs.bus.doorbell import DoorbellReceiver, Doorbells
from libs.bus.external_input import (
    BatchVerdicts,
    DeadLetterVerdict,
    ExternalInput,
    ExternalRecord,
    FirstEvent,
    InputPosition,
    RecordVerdict,
    read_on_the_bus,
)
from libs.bus.fetch_gate import gate_fetches
from libs.bus.handler_errors import RejectedInput, TransientFailure
from libs.bus.headers import dead_letter_headers, event_headers
from libs.bus.health import HealthState, beat_forever, start_health_server
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.member_commits import commit_as_reader
from libs.bus.processed_inputs import ProcessedInputs, Pruned, gone, replica_name
from libs.bus.prometheus import ServicePrometheus
from libs.bus.repeated_log_lines import collapse_repeated_lines
from libs.bus.resume_listener import ResumeFromStoredOffsets
from libs.bus.service_collector import settle_collector
from libs.bus.service_metrics import ServiceMetrics
from libs.clock import Clock, utc_now
from libs.events.codec import MalformedMessage, SignedEvent, open_envelope, seal
from libs.events.factory import next_event
from libs.observability.log_context import set_log_context
from libs.observability.logging_setup import FASTSTREAM_LOGGER, configure_logging
from libs.policy.central import CentralPolicyError
from libs.sandbox.spare_slots import keep_spares
from libs.settings import Settings, SettingsError, load_settings
from libs.signing.keys import KeyRegistry, SigningKey
from libs.state.open_state import state_database
from libs.state.sql_tables import StateUnavailable
from libs.telemetry import ServiceTelemetry, incident_context, service_telemetry
from libs.temporary_files import keep_temporary_files_in

log = logging.getLogger("modelguard.bus")

GRACEFUL_TIMEOUT_S = 10.0
"""How long a stopping consumer waits for the input in flight."""
BROKER_LOSS_CHECK_S = 3.0
"""How often each consumer checks that its broker is still the one it read from (``broker_loss``)."""
PRUNE_EVERY_S = 3600.0
"""How often a service drops the outputs it no longer keeps (``ProcessedInputs.prune_outputs``)."""
CLAIM_POLL_S = 1.0
"""How often a replica looks again at an input another replica has in hand (``processed_inputs``)."""

BATCH_WAIT_MS = 100
"""How long a batch consumer waits for records when none are buffered (``getmany``'s timeout)."""
BATCH_FAILURE_PAUSE_S = 2.0
"""How long a batch consumer waits before a batch that failed as a whole (its store away) is read again."""

Handler = Callable[[SignedEvent], Sequence[BaseModel]]
MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # produced (max_request_size) and fetched (max_partition_fetch_bytes)
Sink = Callable[[SignedEvent], None]


@dataclass(frozen=True)
class Timer:
    """`tick` runs in a worker thread every `every_s` seconds while the service is up; a failing tick is logged
    and tried again at the next one."""

    name: str
    every_s: float
    tick: Callable[[], object]


class UndeclaredEvent(RuntimeError):
    """A service made an event of a type it does not declare it produces (``contracts/service_channels.py``): the
    input it came from is dead-lettered (``undeclared-event``), the event never published."""


@dataclass(frozen=True)
class ServiceDefinition:
    name: str
    version: str
    channels: ServiceChannels
    """What the service consumes and produces, declared once for the runtime, the wiring and the AsyncAPI document
    (``contracts/service_channels.py``): an input of another type is dead-lettered, an output of another type too."""
    handler: Handler | None = None
    sink: Sink | None = None
    external: tuple[ExternalInput, ...] = ()
    timers: tuple[Timer, ...] = ()
    clock: Clock = utc_now
    collectors: tuple[Collector, ...] = ()
    batch_sink: BatchSink | None = None
    """With a sink: the consumer hands it each poll whole instead (``libs/bus/batch_sink``); ``sink`` stays for a
    caller holding one event."""
    """The service's own Prometheus metrics, served on ``/metrics`` beside every service's (``libs/bus/prometheus``)."""
    on_stop: Callable[[], object] | None = None
    """Run once when the service stops gracefully, after its consumers stopped (nothing is in hand any more): the
    ledger seals a checkpoint over what it appended since its last one."""

    @property
    def consumes(self) -> tuple[str, ...]:
        return self.channels.consumes

    @property
    def produces(self) -> tuple[str, ...]:
        return self.channels.produces

    @property
    def topics(self) -> list[str]:
        """Each consumed contract's topic, and its past majors' (read and upcast during a rolling deploy)."""
        return sorted({topic for t in self.consumes for topic in contract_for(t).topics})

    def declared(self, payload: BaseModel) -> str:
        """The payload's event type; UndeclaredEvent when the service does not declare it produces it."""
        event_type = contract_of_payload(payload).event_type
        if event_type not in self.produces:
            raise UndeclaredEvent(
                f"{self.name} made a {event_type}, which it does not declare it produces "
                f"({', '.join(self.produces) or 'nothing'}; contracts/service_channels.py)"
            )
        return event_type


def make_broker(
    settings: Settings,
    service: str,
    telemetry: ServiceTelemetry | None = None,
    prometheus: ServicePrometheus | None = None,
    connection: KafkaConnection | None = None,
    client_id: str | None = None,
    consumer_only: bool = False,
    broker_type: Callable[..., KafkaBroker] = KafkaBroker,
) -> KafkaBroker:
    """A FastStream broker on ``connection`` (default: the bus) with its security. ``consumer_only``: no producer
    and no admin client, so credentials with read-only ACLs will do (DataHub's Kafka). ``broker_type``: FastStream's
    ``KafkaBroker``, or one whose clients are elsewhere (``libs/bus/in_memory_broker.py``)."""
    telemetry = telemetry or service_telemetry(service, settings.trace_file, settings.telemetry)
    connection = connection or settings.kafka
    middlewares: list[Any] = [
        KafkaTelemetryMiddleware(tracer_provider=telemetry.tracer_provider, meter_provider=telemetry.meter_provider)
    ]
    if prometheus is not None:
        middlewares.append(prometheus.middleware())
    return broker_type(
        connection.bootstrap,
        security=connection.security(),
        client_id=client_id or f"modelguard-{service}",
        consumer_only=consumer_only,
        enable_idempotence=settings.kafka_idempotence,
        max_request_size=MAX_MESSAGE_BYTES,
        middlewares=middlewares,
        graceful_timeout=GRACEFUL_TIMEOUT_S,
        logger=logging.getLogger(FASTSTREAM_LOGGER),
    )


class BrokerFactory(Protocol):
    """How a runtime gets its brokers: ``make_broker`` (Kafka), or ``libs.bus.in_memory_broker.in_memory_brokers``."""

    def __call__(
        self,
        settings: Settings,
        service: str,
        telemetry: ServiceTelemetry | None = None,
        prometheus: ServicePrometheus | None = None,
        connection: KafkaConnection | None = None,
        client_id: str | None = None,
        consumer_only: bool = False,
    ) -> KafkaBroker: ...


class ServiceRuntime:
    def __init__(
        self,
        definition: ServiceDefinition,
        settings: Settings,
        key: SigningKey,
        registry: KeyRegistry,
        brokers: BrokerFactory = make_broker,
    ) -> None:
        if (definition.handler is None) == (definition.sink is None):
            raise ValueError("a service has exactly one of handler or sink")
        self.definition = definition
        self.settings = settings
        self.key = key
        self.registry = registry
        self.telemetry = service_telemetry(definition.name, settings.trace_file, settings.telemetry)
        self.metrics = ServiceMetrics(self.telemetry.meter_provider.get_meter("modelguard.bus"))
        self.health = HealthState()
        self.prometheus = ServicePrometheus(definition.name, definition.collectors)
        self._background: list[asyncio.Task[None]] = []
        self.broker = brokers(settings, definition.name, self.telemetry, self.prometheus)
        self.external_broker: KafkaBroker | None = None
        """DataHub's Kafka, when it is not the bus (``Settings.mcl_on_the_bus``): the consumers of the external topics
        there only; what they lead to (first events, dead letters) is published on the bus."""
        on_datahub = [t for e in definition.external for t in e.topics if not read_on_the_bus(t)]
        if on_datahub and not settings.mcl_on_the_bus:
            self.external_broker = brokers(
                settings,
                definition.name,
                self.telemetry,
                self.prometheus,
                connection=settings.mcl_kafka,
                client_id=f"modelguard-{definition.name}-datahub",
                consumer_only=True,
            )
        self.doorbells = Doorbells(settings.bus_doorbells)
        """Rung after each publish: on a broker the stack owns, the topic's readers then fetch at once
        (``libs/bus/doorbell.py``); without ``Settings.bus_doorbells``, nothing is rung."""
        self._doorbell: DoorbellReceiver | None = None
        self.state = state_database(settings)
        self.processed = ProcessedInputs.of(self.state, definition.name)
        self.instance = settings.instance or definition.name
        """This process's name in the stack (``diagnoser``, or a replica's ``diagnoser-2``)."""
        self.replica = replica_name(self.instance)
        """This process among the service's replicas: the owner of the claims it takes."""
        self.delivery = default_delivery_policy(settings.central_policy)
        self._unreachable: set[str] = set()
        """The connections whose brokers do not answer (by name: ``bus``, ``datahub``); ready only when none."""
        self.app = FastStream(
            *self.brokers,
            on_startup=[],
            after_startup=[self._announce_ready],
            on_shutdown=[self._going_down],
            logger=logging.getLogger(FASTSTREAM_LOGGER),
        )
        # a handler's input waits the bus's fetch wait at each hop; a batch sink (the ledger) is on no incident's
        # path, so it keeps Kafka's 500 ms and its polls cost the embedded broker less
        polls: dict[str, Any] = (
            {"batch": True, "max_records": MAX_RECORDS, "batch_timeout_ms": WAIT_MS}
            if definition.batch_sink
            else {"fetch_max_wait_ms": settings.kafka_fetch_max_wait_ms}
        )
        self._commits_behind: list[CommitBehind] = []
        """The external inputs' commits run behind their consumers, waited for once the consumers stopped."""
        self.app.after_shutdown(self._commits_ended)
        if definition.on_stop is not None:
            self.app.after_shutdown(self._stopped)
        self._input = self.broker.subscriber(
            *definition.topics,
            group_id=f"modelguard-{definition.name}",
            auto_offset_reset="earliest",
            session_timeout_ms=settings.kafka_session_timeout_ms,
            heartbeat_interval_ms=max(500, settings.kafka_session_timeout_ms // 4),
            max_poll_interval_ms=15 * 60 * 1000,
            ack_policy=AckPolicy.NACK_ON_ERROR,
            **polls,
        )
        self._input(self.on_batch if definition.batch_sink else self.on_message)
        for external in definition.external:
            if self.external_broker is None:
                self._subscribe_external(external, external.topics, self.broker, settings.kafka)
                continue
            # DataHub's topics through DataHub's broker; ModelGuard's own (the datahub-actions action's) on the bus
            datahubs = [t for t in external.topics if not read_on_the_bus(t)]
            ours = [t for t in external.topics if read_on_the_bus(t)]
            alone = not (datahubs and ours)  # two consumers of one input: each settles in step
            if datahubs:
                self._subscribe_external(external, datahubs, self.external_broker, settings.mcl_kafka, alone)
            if ours:
                self._subscribe_external(external, ours, self.broker, settings.kafka, alone)

    def _subscribe_external(
        self,
        external: ExternalInput,
        topics: Sequence[str],
        broker: KafkaBroker,
        connection: KafkaConnection,
        alone: bool = True,
    ) -> None:
        """A consumer of an external input's ``topics`` on ``broker``, resuming from the input's stored offsets, the
        start policy's offset lookups made through ``connection``; ``alone``: the input's only consumer (it may then
        commit its batches behind, when the input offers it)."""
        settings = self.settings
        behind: CommitBehind | None = None
        if alone and external.settle_behind is not None and external.stored_offsets is not None:
            behind = CommitBehind(external.settle_behind, external.stored_offsets, self.definition.name)
            self._commits_behind.append(behind)
        resume = ResumeFromStoredOffsets(
            external.stored_offsets or dict,
            start=settings.mcl_start,
            probe=lambda: AIOKafkaConsumer(
                **connection.client_options(),
                enable_auto_commit=False,
                max_partition_fetch_bytes=MAX_MESSAGE_BYTES,
            ),
        )
        options: dict[str, Any] = {
            "group_id": f"modelguard-{self.definition.name}-{external.name}",
            "auto_offset_reset": "earliest",
            "session_timeout_ms": settings.kafka_session_timeout_ms,
            "heartbeat_interval_ms": max(500, settings.kafka_session_timeout_ms // 4),
            "ack_policy": AckPolicy.NACK_ON_ERROR,
            "max_partition_fetch_bytes": MAX_MESSAGE_BYTES,
            "listener": resume,
        }
        if behind is not None:
            resume.before_revoke = behind.quiet
        if external.handle_batch is not None:
            subscriber = broker.subscriber(
                *topics,
                batch=True,
                max_records=external.batch_max_records,
                batch_timeout_ms=BATCH_WAIT_MS,
                parser=_parse_batch_once,
                decoder=_batch_values,
                **options,
            )
            subscriber(self._external_batch_consumer(external, behind))
        else:
            subscriber = broker.subscriber(*topics, **options)
            subscriber(self._external_consumer(external))
        resume.subscriber = subscriber

    @property
    def brokers(self) -> list[KafkaBroker]:
        """The bus first, then DataHub's Kafka when the service reads it apart."""
        return [self.broker] if self.external_broker is None else [self.broker, self.external_broker]

    def _connections(self) -> list[tuple[str, KafkaConnection, KafkaBroker]]:
        """Each connection the service depends on, its name and the broker whose consumers read from it."""
        bus = ("bus", self.settings.kafka, self.broker)
        if self.external_broker is None:
            return [bus]
        return [bus, ("datahub", self.settings.mcl_kafka, self.external_broker)]

    async def _announce_ready(self) -> None:
        ready = self.settings.run_dir / f"{self.instance}.ready"
        ready.parent.mkdir(parents=True, exist_ok=True)
        ready.write_text(str(os.getpid()))
        self.health.ready = True
        self._background.append(asyncio.create_task(beat_forever(self.health)))
        self.start_timers()
        self._background.append(
            asyncio.create_task(
                watch_for_broker_loss(
                    lambda: [getattr(sub, "consumer", None) for b in self.brokers for sub in b.subscribers],
                    BROKER_LOSS_CHECK_S,
                    self.definition.name,
                )
            )
        )
        self._background.append(
            asyncio.create_task(
                sample_lag_forever(
                    lambda: [getattr(sub, "consumer", None) for b in self.brokers for sub in b.subscribers],
                    self.prometheus.consumer_lag,
                )
            )
        )
        self._background += [asyncio.create_task(self._watch(*c)) for c in self._connections()]
        self._background.append(asyncio.create_task(self._prune_outputs_forever()))
        self._gate_input_fetches()
        log.info("%s ready on %s", self.definition.name, ", ".join(self.definition.topics))

    def _gate_input_fetches(self) -> None:
        """On a broker the stack owns (``Settings.bus_doorbells`` set): the input consumer's fetches wait for its
        doorbell (``libs/bus/fetch_gate.py``). A batch sink (the ledger), on no incident's path, keeps its polls."""
        folder = self.settings.bus_doorbells
        if folder is None or self.definition.batch_sink is not None:
            return
        if self._doorbell is None:
            bell = DoorbellReceiver(folder, self.definition.topics)
            try:
                bell.open()
            except OSError as exc:
                log.warning("%s: no doorbell (%s): its fetches wait on the broker", self.definition.name, exc)
                return
            self._doorbell = bell
        consumer = getattr(self._input, "consumer", None)
        if consumer is None:
            return
        why_not = gate_fetches(consumer, self._doorbell, self.settings.kafka_fetch_max_wait_ms / 1000)
        if why_not is not None:
            log.warning("%s: fetches not gated (%s): they wait on the broker", self.definition.name, why_not)
        else:
            log.info("%s: its input's fetches wait for its doorbell in %s", self.definition.name, folder)

    async def _prune_outputs_forever(self) -> None:
        """Drop the outputs of inputs handled longer ago than the settings keep them, at start and every
        ``PRUNE_EVERY_S``; a state database that does not answer is tried again next time."""
        while True:
            try:
                pruned = await asyncio.to_thread(self.processed.prune_outputs, self.settings.processed_outputs_keep_s)
            except StateUnavailable as exc:
                log.warning("%s could not prune the outputs it keeps: %s", self.definition.name, exc)
            except Exception:  # a bug here must not end the pruning for the rest of the service's life
                log.exception("%s: pruning the outputs it keeps failed", self.definition.name)
            else:
                if pruned:
                    log.info(
                        "%s no longer keeps the outputs of %d inputs handled more than %.0f h ago",
                        self.definition.name,
                        pruned,
                        self.settings.processed_outputs_keep_s / 3600,
                    )
            await asyncio.sleep(PRUNE_EVERY_S)

    def start_timers(self) -> None:
        """The definition's timers, each in a task of its own until the service goes down."""
        self._background += [asyncio.create_task(_run_timer(t)) for t in self.definition.timers]

    async def _commits_ended(self) -> None:
        """After the consumers stopped: the commits in flight end before the service does (one that fails is read
        again at the next start, from the offsets its input stored)."""
        for behind in self._commits_behind:
            await behind.quiet()
            behind.close()

    async def _stopped(self) -> None:
        """After the brokers stopped: the definition's ``on_stop``, in a worker thread like its handler; a failure
        is logged and the service stops all the same (the ledger's timer seals at its next start)."""
        assert self.definition.on_stop is not None
        try:
            await asyncio.to_thread(self.definition.on_stop)
        except Exception:
            log.exception("%s: its last step on stopping failed", self.definition.name)

    async def _watch(self, name: str, connection: KafkaConnection, broker: KafkaBroker) -> None:
        """Probe one connection's brokers; stop and start that broker's consumers around an outage."""

        async def pause() -> None:
            await self._stop_consumers(broker)

        async def resume() -> None:
            await self._start_consumers(broker)

        def set_ready(ready: bool) -> None:
            self._set_ready(ready, name)

        service = self.definition.name if name == "bus" else f"{self.definition.name} (DataHub's Kafka)"
        await watch_reachability(connection.bootstrap, service, pause=pause, resume=resume, set_ready=set_ready)

    async def _stop_consumers(self, broker: KafkaBroker | None = None) -> None:
        """While a broker (default: the bus) is unreachable: no consumer of it, so no client retrying every 100 ms."""
        started = time.monotonic()
        subscribers = list((broker or self.broker).subscribers)
        ordinary = [await stop_subscriber(s, grace_s=GRACEFUL_TIMEOUT_S + 5.0) for s in subscribers]
        log.info(
            "%s: %d consumers stopped in %.1f s (%d without leaving their group)",
            self.definition.name,
            len(subscribers),
            time.monotonic() - started,
            ordinary.count(False),
        )

    async def _start_consumers(self, broker: KafkaBroker | None = None) -> None:
        for subscriber in (broker or self.broker).subscribers:
            if getattr(subscriber, "consumer", None) is None:
                await subscriber.start()
        self._gate_input_fetches()  # a started consumer is a new one

    def _set_ready(self, ready: bool, connection: str = "bus") -> None:
        """Ready while every connection the service depends on answers."""
        if ready:
            self._unreachable.discard(connection)
        else:
            self._unreachable.add(connection)
        self.health.ready = not self._unreachable

    async def _going_down(self) -> None:
        self.health.ready = False
        for task in self._background:
            task.cancel()
        if self._doorbell is not None:
            self._doorbell.close()
            self._doorbell = None
        self.doorbells.close()

    async def dead_letter(self, raw: bytes, reason: str, detail: str, source: str, key: bytes | None) -> None:
        self.metrics.dead_lettered(reason)
        self.prometheus.dead_lettered(reason)
        log.warning("dead-letter %s from %s: %s", reason, source, detail[:200])
        await self.broker.publish(
            raw,
            topic=DEAD_LETTER_TOPIC,
            key=key,
            headers=dead_letter_headers(reason, detail, self.definition.name, source),
        )
        self.doorbells.ring(DEAD_LETTER_TOPIC)

    async def _retry_or_give_up(
        self, input_id: str, what: str, exc: TransientFailure, raw: bytes, source: str, key: bytes | None
    ) -> bool:
        """After a transient failure: wait and say retry (the offset stays), or, once the input has failed the
        central policy's ``delivery.max_attempts`` times, dead-letter it with ``retries-exhausted``."""
        if not exc.counted:
            await asyncio.sleep(exc.retry_after_s)
            return True
        failed = self.processed.failed_attempt(input_id)
        if self.delivery.exhausted(failed):
            detail = f"failed {failed} times (delivery.max_attempts {self.delivery.max_attempts}); last: {exc}"
            await self.dead_letter(raw, "retries-exhausted", detail, source, key)
            return False
        delay = self.delivery.delay(failed, exc.retry_after_s)
        log.info("%s will retry %s in %.1fs (attempt %d failed): %s", self.definition.name, what, delay, failed, exc)
        await asyncio.sleep(delay)
        return True

    async def on_message(self, msg: KafkaMessage) -> None:
        record: Any = msg.raw_message
        source = f"{record.topic}/{record.partition}@{record.offset}"
        commit_as_reader(msg, source)
        raw: bytes = record.value if isinstance(record.value, bytes) else bytes(msg.body)
        self.metrics.received(record.topic)
        set_log_context(None, None)  # until the input is verified, its lines name no incident
        try:
            signed = open_envelope(raw, self.registry)
        except MalformedMessage as exc:
            await self.dead_letter(raw, exc.reason, exc.detail, source, record.key)
            return
        meta = signed.event.meta
        set_log_context(meta.incident_id, getattr(signed.event.payload, "run_id", None))
        if meta.event_type not in self.definition.consumes:
            await self.dead_letter(raw, "unexpected-event-type", meta.event_type, source, record.key)
            return
        what = f"{meta.event_type} {meta.event_id}"
        already = await asyncio.to_thread(self.processed.outputs_of, meta.event_id)
        if already is not None:
            await self._resend(what, already)
            return
        if not await self._claim(meta.event_id, what):
            return
        keeping = asyncio.create_task(self._keep_claim(meta.event_id, what))
        try:
            await self._handle_claimed(signed, meta, what, raw, source, record.key, keeping)
        finally:
            keeping.cancel()  # whatever happened, this replica no longer renews the claim

    async def _handle_claimed(
        self,
        signed: SignedEvent,
        meta: EventMeta,
        what: str,
        raw: bytes,
        source: str,
        key: bytes | None,
        keeping: asyncio.Task[None],
    ) -> None:
        """Handle an input this replica has claimed: its outputs published and recorded, or its dead letter."""
        started = time.perf_counter()
        try:
            outputs = await asyncio.to_thread(self._handle, signed)
        except RejectedInput as exc:
            self.metrics.handled(meta.event_type, time.perf_counter() - started, "rejected")
            await self.dead_letter(raw, exc.reason, exc.detail, source, key)
            await self._done(meta.event_id, [], keeping)
            return
        except UndeclaredEvent as exc:
            self.metrics.handled(meta.event_type, time.perf_counter() - started, "error")
            await self.dead_letter(raw, "undeclared-event", str(exc), source, key)
            await self._done(meta.event_id, [], keeping)
            return
        except TransientFailure as exc:
            self.metrics.handled(meta.event_type, time.perf_counter() - started, "retry")
            keeping.cancel()
            await asyncio.to_thread(self.processed.release, meta.event_id, self.replica)
            if await self._retry_or_give_up(meta.event_id, what, exc, raw, source, key):
                raise
            await self._done(meta.event_id, [], keeping)
            return
        except Exception as exc:  # a bug or bad data in a handler must not stop the service
            self.metrics.handled(meta.event_type, time.perf_counter() - started, "error")
            detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
            await self.dead_letter(raw, "handler-error", detail, source, key)
            await self._done(meta.event_id, [], keeping)
            return
        elapsed = time.perf_counter() - started
        self.metrics.handled(meta.event_type, elapsed, "ok")
        produced = ", ".join(o.event.meta.event_type for o in outputs) or "nothing (recorded)"
        log.info(
            "%s handled %s %s in %.2f s: %s", self.definition.name, meta.event_type, meta.event_id, elapsed, produced
        )
        for sealed in outputs:
            await self._publish(sealed)
        await self._done(meta.event_id, [s.envelope_bytes for s in outputs], keeping)

    async def _resend(self, what: str, envelopes: list[bytes] | Pruned) -> None:
        if isinstance(envelopes, Pruned):
            log.warning(
                "%s handled %s more than %.0f h ago; its outputs are no longer kept, so nothing is sent again "
                "(MODELGUARD_PROCESSED_OUTPUTS_KEEP_HOURS)",
                self.definition.name,
                what,
                self.settings.processed_outputs_keep_s / 3600,
            )
            return
        log.info("%s already handled %s: re-sending its %d output(s)", self.definition.name, what, len(envelopes))
        for envelope in envelopes:
            await self._publish(open_envelope(envelope, self.registry))

    async def _claim(self, event_id: str, what: str) -> bool:
        """Claim the input for this replica, waiting while another live replica has it in hand (a rebalance moved
        its partition here mid-input); False when that replica finished it (its outputs are sent again here)."""
        lease_s = self.settings.claim_lease_s
        waiting_for: str | None = None
        while True:
            try:
                held = await asyncio.to_thread(self.processed.claim, event_id, self.replica, lease_s)
            except StateUnavailable as exc:
                log.warning("%s cannot reach its state (%s): trying %s again", self.definition.name, exc, what)
                await asyncio.sleep(CLAIM_POLL_S * 2)
                continue
            if held is None:
                if waiting_for:
                    log.info("%s takes over %s from %s (its lease ran out)", self.definition.name, what, waiting_for)
                return True
            if held.done:
                outputs = await asyncio.to_thread(self.processed.outputs_of, event_id)
                await self._resend(what, [] if outputs is None else outputs)
                return False
            if gone(held.owner) and await asyncio.to_thread(
                self.processed.take_over, event_id, held.owner, self.replica, lease_s
            ):
                log.info("%s takes over %s from %s, which is gone", self.definition.name, what, held.owner)
                return True
            if held.owner != waiting_for:
                log.info(
                    "%s: %s is in hand at %s (lease %.0f s more): waiting for it",
                    self.definition.name,
                    what,
                    held.owner,
                    held.remaining_s,
                )
                waiting_for = held.owner
            await asyncio.sleep(min(CLAIM_POLL_S, max(0.1, held.remaining_s)))

    async def _keep_claim(self, event_id: str, what: str) -> None:
        """Renew this replica's claim while it handles the input."""
        lease_s = self.settings.claim_lease_s
        while True:
            await asyncio.sleep(lease_s / 3)
            try:
                held = await asyncio.to_thread(self.processed.renew, event_id, self.replica, lease_s)
            except StateUnavailable as exc:
                log.warning("%s could not renew its claim on %s: %s", self.definition.name, what, exc)
                continue
            if not held:
                log.warning("%s lost its claim on %s: another replica took it over", self.definition.name, what)
                return

    async def _done(self, event_id: str, envelopes: list[bytes], keeping: asyncio.Task[None]) -> None:
        keeping.cancel()
        await asyncio.to_thread(self.processed.mark, event_id, envelopes, self.replica)

    async def on_batch(self, msg: KafkaMessage) -> None:
        assert self.definition.batch_sink is not None
        commit_as_reader(msg, "a poll")
        tracer = self.telemetry.tracer_provider.get_tracer("modelguard.bus")
        await consume_batch(self, self.definition.batch_sink, msg.raw_message, msg.consumer, tracer)

    def _external_consumer(self, external: ExternalInput) -> Callable[[KafkaMessage], Awaitable[None]]:
        async def on_external(msg: KafkaMessage) -> None:
            record: Any = msg.raw_message
            source = f"{record.topic}/{record.partition}@{record.offset}"
            commit_as_reader(msg, source)
            raw: bytes = record.value if isinstance(record.value, bytes) else bytes(msg.body)
            position = InputPosition(record.topic, record.partition, record.offset)
            self.metrics.received(record.topic)
            set_log_context(None, None)
            try:
                firsts = await asyncio.to_thread(external.handle, raw, position)
            except RejectedInput as exc:
                kept = raw if exc.keep is None else exc.keep
                await self.dead_letter(kept, exc.reason, exc.detail, source, record.key)
                await asyncio.to_thread(external.settled, (), position)
                return
            except TransientFailure as exc:
                if await self._retry_or_give_up(_digest(raw), source, exc, raw, source, record.key):
                    raise
                await asyncio.to_thread(external.settled, (), position)  # dead-lettered: counted and moved past
                return
            except Exception as exc:  # bad bytes must not stop the service
                detail = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"
                await self.dead_letter(raw, "handler-error", detail, source, record.key)
                await asyncio.to_thread(external.settled, (), position)
                return
            try:
                sealed = self._first_events(firsts)
            except UndeclaredEvent as exc:
                await self.dead_letter(raw, "undeclared-event", str(exc), source, record.key)
                await asyncio.to_thread(external.settled, (), position)
                return
            for first_event in sealed:
                await self._publish_first(first_event)
            await asyncio.to_thread(external.settled, firsts, position)

        return on_external

    def _external_batch_consumer(
        self, external: ExternalInput, behind: CommitBehind | None = None
    ) -> Callable[[KafkaMessage], Awaitable[None]]:
        """Up to ``batch_max_records`` records per call: handled in one worker-thread call, their dead letters and
        first events published, settled in one call (state and offsets in one transaction), and the Kafka offsets
        committed once, when this returns (FastStream acknowledges the batch). With ``behind``, a batch is settled
        while the next is handled (``libs/bus/commit_behind.py``)."""
        assert external.handle_batch is not None and external.settle_batch is not None
        handle_batch, settle_batch = external.handle_batch, external.settle_batch

        def handle_and_settle_quiet(records: Sequence[ExternalRecord]) -> tuple[BatchVerdicts, bool]:
            """Handle; and when nothing is to be published (most batches), settle in the same worker call."""
            result = handle_batch(records)
            if _quiet(result):
                settle_batch(result.verdicts)
                return result, True
            return result, False

        async def on_batch(msg: KafkaMessage) -> None:
            commit_as_reader(msg, "a batch of MCL records")
            raw_records: tuple[Any, ...] = msg.raw_message if isinstance(msg.raw_message, tuple) else (msg.raw_message,)
            records = [
                ExternalRecord(InputPosition(r.topic, r.partition, r.offset), _value_bytes(r.value), r.key)
                for r in raw_records
            ]
            for topic, count in Counter(record.position.topic for record in records).items():
                self.metrics.received(topic, count)
            set_log_context(None, None)
            try:
                if behind is None:
                    await handle_records(msg, records, None)
                else:
                    await handle_records_behind(msg, records, behind)
            except Exception:  # the store or a bug outside any one record: not acknowledged, read again after a pause
                log.exception(
                    "%s: a batch of %d MCL records failed; it is read again", self.definition.name, len(records)
                )
                await asyncio.sleep(BATCH_FAILURE_PAUSE_S)
                raise

        async def handle_records_behind(msg: KafkaMessage, records: list[ExternalRecord], behind: CommitBehind) -> None:
            await behind.reloaded()  # after a failed commit, nothing is handled on what the store does not hold
            result = await asyncio.to_thread(handle_batch, records)  # while the batch before commits
            failed = await behind.ended()
            if failed:  # that batch's commit failed: it and this one come again, nothing of this one published
                _rewind(msg, [*failed, *records])
                return
            if result.stopped is not None or not behind.may_go_behind(records):
                await handle_records(msg, records, result)
                return
            if not _quiet(result):
                await self._publish_verdicts(result.verdicts)
            if result.verdicts:
                behind.begin(result.verdicts, records)

        async def handle_records(
            msg: KafkaMessage, records: list[ExternalRecord], handled: BatchVerdicts | None
        ) -> None:
            """In step; ``handled``: the first records' verdicts when they were handled already."""
            remaining = records
            while remaining:
                if handled is None:
                    result, settled = await asyncio.to_thread(handle_and_settle_quiet, remaining)
                else:
                    result, settled, handled = handled, False, None
                if not settled:
                    await self._publish_verdicts(result.verdicts)
                    if result.verdicts:
                        await asyncio.to_thread(settle_batch, result.verdicts)
                if result.stopped is None:
                    return
                stop = result.stopped
                source = _source(stop.record.position)
                failure = stop.failure
                if not isinstance(failure, TransientFailure):
                    failure = TransientFailure(str(failure))
                raw = stop.record.value
                if await self._retry_or_give_up(_digest(raw), source, failure, raw, source, stop.record.key):
                    _rewind(msg, remaining[remaining.index(stop.record) :])
                    return
                given_up = RecordVerdict(stop.record, dead_letter=DeadLetterVerdict("retries-exhausted", str(failure)))
                await asyncio.to_thread(settle_batch, [given_up])  # dead-lettered: counted and moved past
                remaining = remaining[remaining.index(stop.record) + 1 :]

        return on_batch

    async def _publish_verdicts(self, verdicts: Sequence[RecordVerdict]) -> None:
        for verdict in verdicts:
            record = verdict.record
            if verdict.dead_letter is not None:
                letter = verdict.dead_letter
                kept = record.value if letter.keep is None else letter.keep
                await self.dead_letter(kept, letter.reason, letter.detail, _source(record.position), record.key)
                continue
            try:
                sealed = self._first_events(verdict.firsts)
            except UndeclaredEvent as exc:
                await self.dead_letter(record.value, "undeclared-event", str(exc), _source(record.position), record.key)
                continue
            for first_event in sealed:
                await self._publish_first(first_event)

    def _first_events(self, firsts: Sequence[FirstEvent]) -> list[SignedEvent]:
        """The first events of new incidents an external input found, signed; UndeclaredEvent, and none, when the
        service does not declare one of their types."""
        for first in firsts:
            self.definition.declared(first.payload)
        return [
            seal(
                next_event(
                    first.payload,
                    producer=self.definition.name,
                    producer_version=self.definition.version,
                    occurred_at=self.definition.clock(),
                    incident_id=first.incident_id,
                    extra_input_digests=[first.input_digest],
                ),
                self.key,
            )
            for first in firsts
        ]

    async def _publish_first(self, sealed: SignedEvent) -> None:
        """The first event of a new incident opens the incident's trace, linked to the message it came from."""
        set_log_context(sealed.event.meta.incident_id, None)
        log.info(
            "%s opens incident %s: %s",
            self.definition.name,
            sealed.event.meta.incident_id,
            sealed.event.meta.event_type,
        )
        tracer = self.telemetry.tracer_provider.get_tracer("modelguard.bus")
        came_from = trace.get_current_span().get_span_context()
        with tracer.start_as_current_span(
            f"{self.definition.name} opens {sealed.event.meta.incident_id}",
            context=incident_context(sealed.event.meta.incident_id),
            links=[trace.Link(came_from)] if came_from.is_valid else None,
        ):
            await self._publish(sealed)

    async def _publish(self, sealed: SignedEvent) -> None:
        self.metrics.published(sealed.event.meta.event_type)
        topic = contract_for(sealed.event.meta.event_type).topic
        await self.broker.publish(
            sealed.envelope_bytes,
            topic=topic,
            key=sealed.event.meta.incident_id.encode(),
            headers=event_headers(sealed),
        )
        self.doorbells.ring(topic)

    def _handle(self, signed: SignedEvent) -> list[SignedEvent]:
        return handle_and_seal(self.definition, self.key, signed)


async def _run_timer(timer: Timer) -> None:
    while True:
        await asyncio.sleep(timer.every_s)
        try:
            await asyncio.to_thread(timer.tick)
        except Exception:
            log.exception("timer %s failed; it runs again in %.1f s", timer.name, timer.every_s)


def handle_and_seal(definition: ServiceDefinition, key: SigningKey, signed: SignedEvent) -> list[SignedEvent]:
    """One input through a service's handler (or sink), its outputs made into signed events of the incident.

    The transport-free core of a service, which the runtime calls over either transport (Kafka, or the in-memory
    one `modelguard investigate` runs on).
    """
    if definition.sink is not None:
        definition.sink(signed)
        return []
    assert definition.handler is not None
    sealed: list[SignedEvent] = []
    for payload in definition.handler(signed):
        definition.declared(payload)
        event = next_event(
            payload,
            producer=definition.name,
            producer_version=definition.version,
            occurred_at=definition.clock(),
            causes=[signed],
        )
        sealed.append(seal(event, key))
    return sealed


Extension = Callable[["ServiceRuntime"], None]


def run_service(
    definition: ServiceDefinition,
    settings: Settings,
    key: SigningKey,
    registry: KeyRegistry,
    extend: Extension | None = None,
) -> None:
    """Run a service until it is stopped; `extend` may add to its app (the detector's HTTP ingestion)."""
    try:
        configure_logging(definition.name, settings.logging)
        collapse_repeated_lines()  # a broker that is away is said once, not sixty times a second
        runtime = ServiceRuntime(definition, settings, key, registry)
    except (SettingsError, CentralPolicyError, DeliveryPolicyError) as exc:  # a setting, or the central policy's
        # delivery section, the runtime's parts refuse as they are built: one line, not a trace
        print(f"{definition.name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    runtime.telemetry.install()
    if extend is not None:
        try:
            extend(runtime)
        except SettingsError as exc:  # the detector's ingestion token, the CI reporter's key: one line
            print(f"{definition.name}: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    health = start_health_server(runtime.health, settings.health, runtime.prometheus.exposition)
    settle_collector()  # what the service built at start, out of the collector's walks
    try:
        asyncio.run(runtime.app.run())
    except KafkaConnectionError as exc:  # no broker at start: say so once and let the supervisor back off
        where = " or ".join(connection.describe() for _, connection, _ in runtime._connections())
        log.error("%s: no Kafka broker answers at %s (%s): exiting", definition.name, where, exc)
        raise SystemExit(3) from None
    finally:
        if health is not None:
            health.stop()
        runtime.processed.close()
        runtime.telemetry.shutdown()


class RetiredSigningKey(ValueError):
    """The service's key is not its active key in the registry: rotated out, or never registered."""


def service_key(settings: Settings, service: str) -> tuple[SigningKey, KeyRegistry]:
    """The service's signing key (``MODELGUARD_SIGNING_KEY_FILE``, else ``<keys dir>/<service>.key``) and the key
    registry; a key the registry does not list as the service's active one signs nothing (RetiredSigningKey)."""
    from libs.signing.keys import load_private_key

    key_path = settings.signing_key_file or settings.keys_dir / f"{service}.key"
    key, registry = load_private_key(service, key_path), KeyRegistry.load(settings.key_registry_path)
    problem = registry.signing_key_problem(key)
    if problem is not None:
        raise RetiredSigningKey(problem)
    return key, registry


def serve(
    name: str, build: Callable[[Settings, SigningKey], ServiceDefinition], extend: Extension | None = None
) -> None:
    """A service process: settings from the environment, its own signing key, its handler wired to Kafka."""
    try:
        settings = load_settings()
    except SettingsError as exc:  # a bad setting (a Kafka connection, a duration): one line, not a trace
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        key, registry = service_key(settings, name)
    except RetiredSigningKey as exc:  # rotated out, or not registered: it would sign what nobody can verify
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    except (OSError, ValueError) as exc:  # no key, an unreadable one, a broken registry: one line, not a trace
        print(f"{name}: cannot load its signing key or the key registry: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    try:
        definition = build(settings, key)
    except (SettingsError, CentralPolicyError) as exc:  # a policy section its parts read as they are built
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if settings.scratch_root is not None:  # its commands' staging beside its workspaces, not in the machine's /tmp
        try:
            keep_temporary_files_in(settings.scratch_dir(name) / "tmp")
        except OSError as exc:
            print(f"{name}: cannot use its scratch folder under {settings.scratch_root}: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    keep_spares()  # a service runs commands for as long as it lives: their slots are made ahead (none until one runs)
    run_service(definition, settings, key, registry, extend)


def _digest(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw).hexdigest()


async def _parse_batch_once(records: tuple[Any, ...], original: Callable[[tuple[Any, ...]], Awaitable[Any]]) -> Any:
    """FastStream's batch message for a batch of external records without its per-record work (headers decoded, trace
    baggage extracted and every body decoded, record by record: as much time as the MCL intake's own per record).
    The first record's headers stand for the batch's (DataHub's MCLs carry no trace context); the acknowledgement and
    the rewind on a failure see every record."""
    parsed = await original(records[:1])
    parsed.raw_message = records
    parsed.body = [record.value or b"" for record in records]
    parsed.message_id = f"{records[0].offset}-{records[-1].offset}-{records[0].timestamp}"
    return parsed


def _batch_values(message: Any) -> Any:
    """The batch's record values as they are: the input decodes its own bytes."""
    return message.body


def _source(position: InputPosition) -> str:
    return f"{position.topic}/{position.partition}@{position.offset}"


def _value_bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else bytes(value or b"")


def _quiet(result: BatchVerdicts) -> bool:
    """True when a batch's verdicts have nothing to publish (most batches)."""
    return bool(result.verdicts) and not any(v.firsts or v.dead_letter for v in result.verdicts)


def _rewind(msg: KafkaMessage, unsettled: Sequence[ExternalRecord]) -> None:
    """Seek each partition of ``unsettled`` back to its first record there, so the acknowledgement that follows
    commits those positions and the next fetch starts from them (a partition revoked meanwhile is skipped)."""
    consumer = getattr(msg, "consumer", None)
    first: dict[tuple[str, int], int] = {}
    for record in unsettled:
        key = (record.position.topic, record.position.partition)
        first[key] = min(first.get(key, record.position.offset), record.position.offset)
    for (topic, partition), offset in first.items():
        try:
            consumer.seek(AIOTopicPartition(topic, partition), offset)  # type: ignore[union-attr]
        except (IllegalStateError, AttributeError) as exc:
            log.info("not rewinding %s/%d to %d: %s", topic, partition, offset, exc)
