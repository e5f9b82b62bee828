"""The ledger service over the real broker, consuming a poll at a time: a burst of incidents whose effects come
before their causes is appended once each, in causal order, in fewer transactions than events; an effect whose cause
comes later waits for it; a malformed message and an event of no contract are dead-lettered; a redelivered event is
not appended twice; and the ledger verifies, checkpoints included."""

from __future__ import annotations

import asyncio
import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

from contracts.registry import DEAD_LETTER_TOPIC, all_topics, contract_for
from libs.bus.embedded_broker import start_embedded_broker
from libs.bus.headers import DLQ_REASON
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.producer import publish_raw, publish_signed
from libs.bus.runtime import ServiceRuntime
from libs.bus.topics import ensure_topics
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, verify_all, verify_checkpoints
from libs.settings import load_settings
from services.ledger.bootstrap import bootstrap
from tests.support.hand_started_runtime import stop_runtime
from tests.support.kafka_reader import read_topic
from tests.support.sample_events import PRODUCERS, SampleKeys, repaired_incident, sample_incident_id
from tests.support.waiting import until

pytestmark = pytest.mark.broker


@pytest.mark.timeout(300)
def test_a_burst_is_appended_a_poll_at_a_time_in_causal_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    keys = SampleKeys.generate([*PRODUCERS, "ledger"])
    transactions: list[int] = []
    append_batch = LedgerStore.append_batch

    def counted(self: LedgerStore, events: Any) -> Any:
        transactions.append(len(events))
        return append_batch(self, events)

    monkeypatch.setattr(LedgerStore, "append_batch", counted)
    incidents = {f"burst-{i}": repaired_incident(keys, f"burst-{i}") for i in range(12)}
    late = repaired_incident(keys, "burst-late")
    burst: list[SignedEvent] = [e for chain in incidents.values() for e in reversed(chain)]  # effects first
    random.Random(7).shuffle(burst)
    broker = start_embedded_broker(tmp_path / "broker.log")
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MODELGUARD_LEDGER_URL", raising=False)
    settings = dataclasses.replace(load_settings(), kafka=KafkaConnection(broker.bootstrap))
    store = LedgerStore(settings.ledger_url)

    async def scenario() -> None:
        await ensure_topics(broker.bootstrap, all_topics(), 1)
        runtime = ServiceRuntime(bootstrap(settings, keys.keys["ledger"]), settings, keys.keys["ledger"], keys.registry)
        await runtime.broker.start()
        await runtime._announce_ready()
        try:
            await publish_signed(broker.bootstrap, [*late[2:], *burst])  # late's first two events come later
            await publish_raw(broker.bootstrap, contract_for("RepairProposed").topic, b"{not an envelope")
            assert await until(lambda: store.count() == len(burst), 120), store.count()
            await asyncio.sleep(1.0)
            assert store.incident_events(sample_incident_id("burst-late")) == []  # waiting for its causes
            await publish_signed(broker.bootstrap, [late[1], late[0], burst[0]])  # burst[0] again: a repeat
            assert await until(lambda: store.count() == len(burst) + len(late), 120), store.count()
        finally:
            await stop_runtime(runtime)

    try:
        asyncio.run(scenario())
        dead = read_topic(broker.bootstrap, DEAD_LETTER_TOPIC, 1, timeout_s=30)
    finally:
        broker.stop()
    assert [dict(r.headers).get(DLQ_REASON) for r in dead] == [b"not-json"]
    for name, chain in [*incidents.items(), ("burst-late", late)]:
        rows = store.incident_events(sample_incident_id(name))
        assert [r.event_id for r in rows] == [e.event.meta.event_id for e in chain], name
    assert all(r.ok for r in verify_all(store, keys.registry))
    assert verify_checkpoints(store, keys.registry).ok
    assert store.checkpoints(), "the service sealed checkpoints as it appended"
    appended = len(burst) + len(late)
    assert sum(transactions) >= appended and len(transactions) < appended / 2, transactions
    store.close()
