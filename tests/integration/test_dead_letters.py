"""A service over the real broker: malformed input goes to the dead-letter topic with a reason, and the
service keeps consuming and handles the next good event."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer, ConsumerRecord

from contracts.envelope import EVENT_PAYLOAD_TYPE
from contracts.registry import DEAD_LETTER_TOPIC, contract_for, topic_of
from libs.bus.in_memory_kafka import InMemoryKafka
from libs.bus.in_memory_services import services_in_memory
from libs.bus.producer import publish_raw, publish_signed, send_signed
from libs.canonical_json import canonical_bytes
from libs.events.codec import envelope_bytes, open_envelope, seal
from libs.settings import Settings, load_settings
from libs.signing.dsse import sign_envelope
from libs.signing.keys import KeyRegistry, generate_key, load_private_key
from modelguard.investigate import built_services
from tests.support.kafka_reader import read_topic
from tests.support.running_stack import environment, running_stack
from tests.support.sample_events import reported
from tests.support.self_reported_policy import install_self_reported_policy

pytestmark = pytest.mark.broker


@pytest.fixture(scope="module")
def detector_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, str]]:
    home = tmp_path_factory.mktemp("stack")
    install_self_reported_policy(home)  # the sample evaluation's artifacts are fake: gate on its own figures
    with running_stack(home, services=("detector",)) as running:
        yield running.settings, running.bootstrap


class _RegisteredKeys:
    """The stack's own keys, so the test signs as the reporter the registry knows."""

    def __init__(self, settings: Settings) -> None:
        self.registry = KeyRegistry.load(settings.key_registry_path)
        self._dir = settings.keys_dir

    def __getitem__(self, owner: str):  # type: ignore[no-untyped-def]
        return load_private_key(owner, self._dir / f"{owner}.key")


def test_malformed_messages_are_dead_lettered_and_consumption_continues(detector_stack: tuple[Settings, str]) -> None:
    settings, bootstrap = detector_stack
    keys = _RegisteredKeys(settings)
    topic = contract_for("EvaluationReported").topic
    good = reported(keys, run_id="after-the-garbage")  # type: ignore[arg-type]
    wrong_type = good.envelope_bytes.replace(b'"payloadType":"', b'"payloadType":"x', 1)
    document = good.event.model_dump(mode="json")
    document["payload"]["claimed"] = "not a claim"
    wrong_schema = envelope_bytes(sign_envelope(canonical_bytes(document), EVENT_PAYLOAD_TYPE, keys["reporter"]))
    stranger = generate_key("reporter")
    forged = seal(good.event, stranger).envelope_bytes
    garbage = f"this is not json ({good.event.meta.event_id})".encode()  # this test's own, whatever ran before
    no_envelope = b'{"payloadType": "application/json", "payload": "e30=", "signatures": [], "x": "%s"}' % (
        good.event.meta.event_id.encode()
    )
    sent = {garbage, no_envelope, wrong_type, wrong_schema, forged}

    async def send() -> None:
        await publish_raw(bootstrap, topic, garbage, key=b"k")
        await publish_raw(bootstrap, topic, no_envelope)
        await publish_raw(bootstrap, topic, wrong_type)
        await publish_raw(bootstrap, topic, wrong_schema)
        await publish_raw(bootstrap, topic, forged)
        await publish_signed(bootstrap, [good])

    asyncio.run(send())
    dead: list[ConsumerRecord] = []  # this test's dead letters only: the module's other tests share the topic
    deadline = time.monotonic() + 90
    while {r.value for r in dead} != sent and time.monotonic() < deadline:
        dead = [r for r in read_topic(bootstrap, DEAD_LETTER_TOPIC, expected=10**6, timeout_s=2) if r.value in sent]
    reasons = sorted(dict(r.headers)["mg-dlq-reason"].decode() for r in dead)
    assert reasons == ["bad-signature", "not-an-envelope", "not-json", "schema-violation", "wrong-payload-type"]
    assert all(dict(r.headers)["mg-dlq-service"] == b"detector" for r in dead)
    assert garbage in [r.value for r in dead]  # the original bytes are kept, nothing is lost

    def caused_by_good(record: ConsumerRecord) -> bool:
        return open_envelope(record.value, keys.registry).event.meta.causation_id == good.event.meta.event_id

    assert _until_found(bootstrap, contract_for("RegressionDetected").topic, caused_by_good)
    detected = [
        r for r in read_topic(bootstrap, contract_for("RegressionDetected").topic, 10**6, 2) if caused_by_good(r)
    ]
    assert len(detected) == 1
    opened = open_envelope(detected[0].value, keys.registry)
    assert opened.event.payload.gate.regressed is True
    claim = good.event.payload.claimed
    assert claim is not None and opened.event.payload.gate.baseline == claim.baseline["f1"]
    headers = dict(detected[0].headers)
    assert headers["mg-event-type"] == b"RegressionDetected"
    assert headers["traceparent"].startswith(b"00-")


def _until_found(bootstrap: str, topic: str, found: Callable[[ConsumerRecord], bool], timeout_s: float = 90) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(found(r) for r in read_topic(bootstrap, topic, expected=10**6, timeout_s=2)):
            return True
    return False


def test_during_a_rolling_deploy_a_newer_minors_event_is_handled_and_its_unknown_field_ignored(
    detector_stack: tuple[Settings, str],
) -> None:
    """A reporter already on EvaluationReported 2.1 (one more optional field) ahead of a detector on 2.0: the
    detector reads it tolerantly; the same field in an event that claims 2.0 is still refused."""
    settings, bootstrap = detector_stack
    keys = _RegisteredKeys(settings)
    topic = contract_for("EvaluationReported").topic

    def signed_with_extra_field(run_id: str, version: str) -> tuple[str, bytes]:
        document = reported(keys, run_id=run_id).event.model_dump(mode="json")  # type: ignore[arg-type]
        document["meta"]["event_version"] = version
        document["payload"]["ci_provider"] = "gitlab"
        raw = envelope_bytes(sign_envelope(canonical_bytes(document), EVENT_PAYLOAD_TYPE, keys["reporter"]))
        return document["meta"]["event_id"], raw

    newer_id, newer = signed_with_extra_field("rolling-deploy-newer-minor", "2.1")
    _, same = signed_with_extra_field("rolling-deploy-same-minor", "2.0")
    asyncio.run(publish_raw(bootstrap, topic, newer, key=b"rolling"))
    asyncio.run(publish_raw(bootstrap, topic, same, key=b"rolling"))

    def caused_by_newer(record: ConsumerRecord) -> bool:
        return open_envelope(record.value, keys.registry).event.meta.causation_id == newer_id

    def same_refused(record: ConsumerRecord) -> bool:
        return record.value == same and dict(record.headers)["mg-dlq-reason"] == b"schema-violation"

    assert _until_found(bootstrap, contract_for("RegressionDetected").topic, caused_by_newer)
    assert _until_found(bootstrap, DEAD_LETTER_TOPIC, same_refused)
    assert not _until_found(bootstrap, DEAD_LETTER_TOPIC, lambda r: r.value == newer, timeout_s=3)


def test_during_a_rolling_deploy_a_past_majors_report_is_upcast_and_gated(detector_stack: tuple[Settings, str]) -> None:
    """A reporter not yet on EvaluationReported 2.0 writes 1.0 to the 1.x topic: the detector reads that topic too,
    checks the signature over the 1.0 bytes, upcasts the report and gates it; a 1.0 report that claims one
    revision's figures only has no 2.0 form and is dead-lettered as such."""
    settings, bootstrap = detector_stack
    keys = _RegisteredKeys(settings)
    past_topic = topic_of("EvaluationReported", 1)
    assert (
        past_topic in contract_for("EvaluationReported").topics
        and past_topic != contract_for("EvaluationReported").topic
    )

    def signed_as_1_0(run_id: str, keep_candidate: bool) -> tuple[str, float, bytes]:
        document = reported(keys, run_id=run_id).event.model_dump(mode="json")  # type: ignore[arg-type]
        claimed = document["payload"].pop("claimed")
        document["meta"]["event_version"] = "1.0"
        document["payload"]["baseline_metrics"] = claimed["baseline"]
        document["payload"]["candidate_metrics"] = claimed["candidate"] if keep_candidate else {}
        raw = envelope_bytes(sign_envelope(canonical_bytes(document), EVENT_PAYLOAD_TYPE, keys["reporter"]))
        return document["meta"]["event_id"], claimed["baseline"]["f1"], raw

    whole_id, baseline, whole = signed_as_1_0("rolling-deploy-past-major", keep_candidate=True)
    _, _, half = signed_as_1_0("rolling-deploy-past-major-half", keep_candidate=False)
    asyncio.run(publish_raw(bootstrap, past_topic, whole, key=b"past-major"))
    asyncio.run(publish_raw(bootstrap, past_topic, half, key=b"past-major"))

    def gated_from_whole(record: ConsumerRecord) -> bool:
        event = open_envelope(record.value, keys.registry).event
        return event.meta.causation_id == whole_id and event.payload.gate.baseline == baseline

    def half_refused(record: ConsumerRecord) -> bool:
        return record.value == half and dict(record.headers)["mg-dlq-reason"] == b"upcast-refused"

    assert _until_found(bootstrap, contract_for("RegressionDetected").topic, gated_from_whole)
    assert _until_found(bootstrap, DEAD_LETTER_TOPIC, half_refused)


def test_the_in_memory_transport_dead_letters_what_the_broker_dead_letters(
    detector_stack: tuple[Settings, str], tmp_path: Path
) -> None:
    """The same hostile bytes, then a good report, to the same detector: over the broker (the stack's process) and
    over the in-memory transport `investigate` runs on. The same dead letters (the bytes kept, the reason, the
    service), and the same RegressionDetected for the good one. Not compared: the dead letters' source (a topic,
    partition and offset: where each broker put the record) and timestamps."""
    settings, bootstrap = detector_stack
    keys = _RegisteredKeys(settings)
    topic = contract_for("EvaluationReported").topic
    good = reported(keys, run_id="both-transports")  # type: ignore[arg-type]
    envelope = json.loads(good.envelope_bytes)
    event = json.loads(base64.b64decode(envelope["payload"]))
    event["payload"]["run_id"] = "both-transports-forged"  # the signature left as it was
    tampered = json.dumps({**envelope, "payload": base64.b64encode(canonical_bytes(event)).decode()}).encode()
    foreign = seal(good.event, generate_key("reporter")).envelope_bytes
    garbage = b"not json either (both-transports)"
    hostile = [tampered, foreign, garbage]

    async def send(producer: Any) -> None:
        for value in hostile:
            await producer.send_and_wait(topic, value, key=b"both")
        await send_signed(producer, [good])

    async def over_kafka() -> None:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            await send(producer)
        finally:
            await producer.stop()

    asyncio.run(over_kafka())
    dead: list[ConsumerRecord] = []
    deadline = time.monotonic() + 90
    while {r.value for r in dead} != set(hostile) and time.monotonic() < deadline:
        dead = [r for r in read_topic(bootstrap, DEAD_LETTER_TOPIC, expected=10**6, timeout_s=2) if r.value in hostile]

    def caused_by_good(record: ConsumerRecord) -> bool:
        return open_envelope(record.value, keys.registry).event.meta.causation_id == good.event.meta.event_id

    assert _until_found(bootstrap, contract_for("RegressionDetected").topic, caused_by_good)
    [detected_on_kafka] = [
        r for r in read_topic(bootstrap, contract_for("RegressionDetected").topic, 10**6, 2) if caused_by_good(r)
    ]

    home = tmp_path / "in-memory"
    shutil.copytree(settings.keys_dir, home / "keys")
    install_self_reported_policy(home)
    with environment({"MODELGUARD_HOME": str(home)}):
        in_memory = load_settings()

    async def over_memory() -> InMemoryKafka:
        cluster = InMemoryKafka()
        async with services_in_memory(cluster, built_services(in_memory, ["detector"]), in_memory, keys.registry):
            producer = cluster.producer()
            await producer.start()
            await send(producer)
            await cluster.settled()
        return cluster

    cluster = asyncio.run(over_memory())

    def letters(records: list[ConsumerRecord]) -> list[tuple[bytes, bytes | None, str, str]]:
        return sorted(
            (r.value, r.key, dict(r.headers)["mg-dlq-reason"].decode(), dict(r.headers)["mg-dlq-service"].decode())
            for r in records
        )

    assert letters(dead) == letters(cluster.records(DEAD_LETTER_TOPIC))
    assert sorted(reason for _, _, reason, _ in letters(dead)) == ["bad-signature", "bad-signature", "not-json"]
    [detected_in_memory] = cluster.records(contract_for("RegressionDetected").topic)
    on_kafka, in_mem = (open_envelope(r.value, keys.registry).event for r in (detected_on_kafka, detected_in_memory))
    assert in_mem.meta.event_id == on_kafka.meta.event_id
    assert in_mem.payload == on_kafka.payload
