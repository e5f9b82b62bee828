"""The in-memory transport `modelguard investigate` runs the services on (libs/bus/in_memory_*.py): a service's own
runtime over it reads bytes, verifies, dedupes, retries and dead-letters, signs and publishes as over Kafka."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiokafka.errors import MessageSizeTooLargeError
from pydantic import BaseModel

from contracts.common import PolicyRef
from contracts.events.evaluation import RegressionDetected
from contracts.registry import DEAD_LETTER_TOPIC, contract_for
from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.handler_errors import TransientFailure
from libs.bus.in_memory_clients import InMemoryProducer
from libs.bus.in_memory_kafka import InMemoryKafka
from libs.bus.in_memory_services import services_in_memory
from libs.bus.producer import send_signed
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent, open_envelope
from libs.policy.central import DEFAULT_CENTRAL_POLICY
from libs.settings import Settings, load_settings
from tests.support.running_stack import environment
from tests.support.sample_events import Keys as SampleKeys
from tests.support.sample_events import artifact, detected, gate, reported

EVALUATIONS = contract_for("EvaluationReported").topic
DETECTIONS = contract_for("RegressionDetected").topic
KEYS = SampleKeys("reporter", "detector", "context")
Send = Callable[[InMemoryProducer], Awaitable[None]]


@pytest.fixture
def settings(tmp_path: Path) -> Iterator[Settings]:
    central = yaml.safe_load(DEFAULT_CENTRAL_POLICY.read_text())
    central["delivery"] = {"max_attempts": 3, "backoff_base_s": 0.01, "backoff_cap_s": 0.05}
    policy = tmp_path / "central.yaml"
    policy.write_text(yaml.safe_dump(central))
    with environment({"MODELGUARD_HOME": str(tmp_path / "home"), "MODELGUARD_CENTRAL_POLICY": str(policy)}):
        yield load_settings()


def detection(signed: SignedEvent) -> list[BaseModel]:
    evaluation = signed.event.payload
    policy = PolicyRef(name="churn", artifact=artifact(b"policy", "application/yaml"))
    return [RegressionDetected(run_id=evaluation.run_id, workspace=evaluation.workspace, policy=policy, gate=gate())]


def detector(handler: Callable[[SignedEvent], list[BaseModel]] = detection) -> ServiceDefinition:
    return ServiceDefinition("detector", "test", SERVICE_CHANNELS["detector"], handler=handler)


def run(settings: Settings, services: list[ServiceDefinition], send: Send) -> InMemoryKafka:
    """The services over a new in-memory cluster: ``send`` publishes, then everything read is handled."""

    async def main() -> InMemoryKafka:
        cluster = InMemoryKafka()
        with_keys = [(definition, KEYS[definition.name]) for definition in services]
        async with services_in_memory(cluster, with_keys, settings, KEYS.registry):
            producer = cluster.producer()
            await producer.start()
            await send(producer)
            await asyncio.wait_for(cluster.settled(), timeout=60)
        return cluster

    return asyncio.run(main())


def headers(record: Any) -> dict[str, str]:
    return {k: v.decode() for k, v in record.headers}


def tampered(signed: SignedEvent) -> bytes:
    """The envelope with its event's run id changed and the signature left as it was."""
    envelope = json.loads(signed.envelope_bytes)
    event = json.loads(base64.b64decode(envelope["payload"]))
    event["payload"]["run_id"] = "run-forged"
    envelope["payload"] = base64.b64encode(json.dumps(event, separators=(",", ":"), sort_keys=True).encode()).decode()
    return json.dumps(envelope).encode()


def test_an_event_is_verified_handled_and_its_output_signed_and_published_with_the_event_headers(
    settings: Settings,
) -> None:
    good = reported(KEYS, run_id="in-memory-1")
    cluster = run(settings, [detector()], lambda producer: send_signed(producer, [good]))

    [record] = cluster.records(DETECTIONS)
    output = open_envelope(record.value, KEYS.registry)  # the signature and the schema are checked again here
    assert output.signer == "detector" and output.event.meta.causation_id == good.event.meta.event_id
    assert record.key == good.event.meta.incident_id.encode()
    said = headers(record)
    assert said["mg-event-type"] == "RegressionDetected" and said["mg-event-id"] == output.event.meta.event_id
    assert said["content-type"] == "application/dsse+json" and said["traceparent"].startswith("00-")
    assert cluster.records(DEAD_LETTER_TOPIC) == []


def test_a_tampered_event_is_dead_lettered_with_its_bytes_and_the_next_one_is_handled(settings: Settings) -> None:
    good = reported(KEYS, run_id="in-memory-2")
    forged = tampered(good)

    async def send(producer: InMemoryProducer) -> None:
        await producer.send_and_wait(EVALUATIONS, forged, key=b"k")
        await send_signed(producer, [good])

    cluster = run(settings, [detector()], send)

    [letter] = cluster.records(DEAD_LETTER_TOPIC)
    assert letter.value == forged and letter.key == b"k"
    said = headers(letter)
    assert said["mg-dlq-reason"] == "bad-signature" and said["mg-dlq-service"] == "detector"
    assert said["mg-dlq-source"] == f"{EVALUATIONS}/0@0"
    [record] = cluster.records(DETECTIONS)
    assert open_envelope(record.value, KEYS.registry).event.meta.causation_id == good.event.meta.event_id


def test_an_event_the_service_does_not_consume_is_dead_lettered(settings: Settings) -> None:
    """A well-signed RegressionDetected put on the evaluations' topic."""
    misplaced = detected(KEYS, reported(KEYS, run_id="in-memory-3"))

    async def send(producer: InMemoryProducer) -> None:
        await producer.send_and_wait(EVALUATIONS, misplaced.envelope_bytes, key=b"k")

    cluster = run(settings, [detector()], send)
    [letter] = cluster.records(DEAD_LETTER_TOPIC)
    assert headers(letter)["mg-dlq-reason"] == "unexpected-event-type" and letter.value == misplaced.envelope_bytes
    assert cluster.records(DETECTIONS) == []


def test_a_redelivered_input_is_answered_with_its_recorded_outputs_not_handled_again(settings: Settings) -> None:
    good = reported(KEYS, run_id="in-memory-4")
    handled: list[str] = []

    def counting(signed: SignedEvent) -> list[BaseModel]:
        handled.append(signed.event.meta.event_id)
        return detection(signed)

    cluster = run(settings, [detector(counting)], lambda producer: send_signed(producer, [good, good]))

    assert handled == [good.event.meta.event_id]
    first, again = cluster.records(DETECTIONS)
    assert first.value == again.value, "the same envelope, byte for byte"


def test_a_transient_failure_is_retried_from_the_same_offset_after_the_policys_backoff(settings: Settings) -> None:
    good = reported(KEYS, run_id="in-memory-5")
    attempts: list[float] = []

    def flaky(signed: SignedEvent) -> list[BaseModel]:
        attempts.append(time.monotonic())
        if len(attempts) == 1:
            raise TransientFailure("DataHub does not answer")
        return detection(signed)

    cluster = run(settings, [detector(flaky)], lambda producer: send_signed(producer, [good]))

    assert len(attempts) == 2 and attempts[1] - attempts[0] >= 0.01, "read again after backoff_base_s"
    assert len(cluster.records(DETECTIONS)) == 1
    assert cluster.records(DEAD_LETTER_TOPIC) == []


def test_an_input_that_always_fails_is_dead_lettered_after_max_attempts_and_the_next_is_handled(
    settings: Settings,
) -> None:
    doomed, next_one = reported(KEYS, run_id="in-memory-6", seed="a"), reported(KEYS, run_id="in-memory-7", seed="b")
    attempts: list[str] = []

    def failing_for_one(signed: SignedEvent) -> list[BaseModel]:
        attempts.append(signed.event.payload.run_id)
        if signed.event.payload.run_id == "in-memory-6":
            raise TransientFailure("DataHub does not answer")
        return detection(signed)

    cluster = run(settings, [detector(failing_for_one)], lambda producer: send_signed(producer, [doomed, next_one]))

    assert attempts == ["in-memory-6"] * 3 + ["in-memory-7"], "max_attempts 3 in the central policy"
    [letter] = cluster.records(DEAD_LETTER_TOPIC)
    assert headers(letter)["mg-dlq-reason"] == "retries-exhausted" and letter.value == doomed.envelope_bytes
    [record] = cluster.records(DETECTIONS)
    assert open_envelope(record.value, KEYS.registry).event.payload.run_id == "in-memory-7"


def test_settled_waits_for_the_whole_chain_of_services(settings: Settings) -> None:
    """The context service is slow; settled() returns once its output is published, not when the detector's is."""
    good = reported(KEYS, run_id="in-memory-8")
    context_done = threading.Event()

    def slow_context(signed: SignedEvent) -> list[BaseModel]:
        time.sleep(0.3)
        context_done.set()
        return []

    context = ServiceDefinition("context", "test", SERVICE_CHANNELS["context"], handler=slow_context)
    run(settings, [detector(), context], lambda producer: send_signed(producer, [good]))
    assert context_done.is_set()


def test_a_record_larger_than_max_request_size_is_refused_as_aiokafka_refuses_it() -> None:
    async def main() -> None:
        cluster = InMemoryKafka()
        producer = cluster.producer(max_request_size=1000)
        await producer.start()
        await producer.send_and_wait("t", b"x" * 900)
        with pytest.raises(MessageSizeTooLargeError):
            await producer.send_and_wait("t", b"x" * 1000)
        assert [r.offset for r in cluster.records("t")] == [0]

    asyncio.run(main())


def test_a_group_reads_on_from_its_committed_offset_and_a_new_group_from_its_reset() -> None:
    async def main() -> None:
        cluster = InMemoryKafka()
        producer = cluster.producer()
        for value in (b"a", b"b", b"c"):
            await producer.send_and_wait("t", value)
        first = cluster.consumer("t", group_id="g", auto_offset_reset="earliest", enable_auto_commit=False)
        await first.start()
        assert (await first.getone()).value == b"a"
        await first.commit()
        assert (await first.getone()).value == b"b"  # read, not committed
        await first.stop()
        again = cluster.consumer("t", group_id="g", auto_offset_reset="earliest")
        await again.start()
        assert (await again.getone()).value == b"b"
        latest = cluster.consumer("t", group_id="other", auto_offset_reset="latest")
        await latest.start()
        assert await latest.getmany(timeout_ms=10) == {}
        await producer.send_and_wait("t", b"d")
        assert [r.value for batch in (await latest.getmany(timeout_ms=10)).values() for r in batch] == [b"d"]

    asyncio.run(main())


def test_an_event_the_service_does_not_declare_it_produces_is_never_published(settings: Settings) -> None:
    """The context service declares ContextCollected and UpstreamRiskDetected (contracts/service_channels.py); a
    handler of it that returns a RegressionDetected anyway gets its input dead-lettered, and only the detector's
    RegressionDetected is on that topic."""
    good = reported(KEYS, run_id="in-memory-9")
    assert "RegressionDetected" not in SERVICE_CHANNELS["context"].produces

    def overreaching(signed: SignedEvent) -> list[BaseModel]:
        return [signed.event.payload.model_copy(update={"run_id": "from-the-context-service"})]

    context = ServiceDefinition("context", "test", SERVICE_CHANNELS["context"], handler=overreaching)
    cluster = run(settings, [detector(), context], lambda producer: send_signed(producer, [good]))

    [letter] = cluster.records(DEAD_LETTER_TOPIC)
    said = headers(letter)
    assert said["mg-dlq-reason"] == "undeclared-event" and said["mg-dlq-service"] == "context"
    assert "RegressionDetected" in said["mg-dlq-detail"]
    [detected] = cluster.records(DETECTIONS)
    assert letter.value == detected.value, "the context service's input, kept"
    assert open_envelope(detected.value, KEYS.registry).signer == "detector"
