"""The MCL consumer commits a batch while it handles the next (``libs/bus/commit_behind.py``), over a real broker:
a partition's first batch is settled in step, the later ones behind; a commit that fails is met before the next
batch is published, what the store does not hold is dropped, and both batches are read again: every record counted
once, every value stored, the stored offset at the end of the topic."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from datahub.metadata.schema_classes import StatusClass

from contracts.registry import all_topics
from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.embedded_broker import start_embedded_broker
from libs.bus.external_input import ExternalInput
from libs.bus.producer import publish_raw
from libs.bus.runtime import ServiceDefinition, ServiceRuntime
from libs.bus.topics import ensure_topics
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_store import MirrorWrite
from libs.datahub.mcl.mirror_store_sqlite import SqliteMirrorStore
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from libs.settings import load_settings
from services.context.intake_counts import IntakeCounts
from services.context.mcl_intake import MclIntake
from tests.support.hand_started_runtime import run_over_brokers, stop_runtime
from tests.support.running_stack import environment
from tests.support.sample_events import Keys
from tests.support.waiting import until
from tests.unit.mcl.mcl_test_inputs import avro_message, mcl_record

pytestmark = pytest.mark.broker

TOPIC = "MetadataChangeLog_Versioned_v1"
RECORDS = 40
BATCH = 4


class _StoreFailingOnce(SqliteMirrorStore):
    """SQLite, except that the ``fail_at``-th write that stores offsets raises (a full disk, say); the threads that
    wrote offsets are kept."""

    fail_at = 4

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.offset_writes = 0
        self.writers: list[str] = []

    def write(self, batch: MirrorWrite) -> None:
        if batch.offsets:
            self.offset_writes += 1
            self.writers.append(threading.current_thread().name)
            if self.offset_writes == self.fail_at:
                raise OSError("database or disk is full")
        super().write(batch)


def _urn(i: int) -> str:
    return f"urn:li:dataset:(urn:li:dataPlatform:hive,commit_behind.table_{i % 13},PROD)"


@pytest.mark.timeout(300)
def test_a_failed_commit_behind_reads_both_batches_again_and_every_record_counts_once(tmp_path: Path) -> None:
    bus = start_embedded_broker(tmp_path / "bus.log")
    env = {
        "MODELGUARD_HOME": str(tmp_path / "home"),
        "MODELGUARD_KAFKA_BOOTSTRAP": bus.bootstrap,
        "MODELGUARD_MCL_TOPICS": TOPIC,
        "MODELGUARD_MCL_START": "earliest",
    }
    with environment(env):
        settings = load_settings()
    store = _StoreFailingOnce.open(tmp_path)
    assert isinstance(store, _StoreFailingOnce)
    mirror = MetadataMirror(store)
    intake = MclIntake(MclDecoder(ShippedSchemaResolver()), mirror)
    mcl = ExternalInput(
        "datahub-mcl",
        (TOPIC,),
        handle=intake,
        stored_offsets=intake.stored_offsets,
        handle_batch=intake.handle_batch,
        settle_batch=intake.settle_batch,
        batch_max_records=BATCH,
        settle_behind=intake.settle_behind(),
    )
    definition = ServiceDefinition("context", "test", SERVICE_CHANNELS["context"], sink=lambda e: None, external=(mcl,))
    # each table's status flips at each of its records: the last value of each shows nothing was applied out of order
    removed = {_urn(i): i // 13 % 2 == 1 for i in range(RECORDS)}

    async def scenario() -> None:
        await ensure_topics(bus.bootstrap, all_topics(), 1)
        await ensure_topics(bus.bootstrap, [TOPIC], 1)
        for i in range(RECORDS):
            record = mcl_record(_urn(i), "status", StatusClass(removed=i // 13 % 2 == 1), run_id=f"run-{i}")
            await publish_raw(bus.bootstrap, TOPIC, avro_message(record))
        runtime = ServiceRuntime(definition, settings, Keys("context")["context"], Keys("context").registry)
        for broker in runtime.brokers:
            await broker.start()
        await runtime._announce_ready()
        try:
            assert await until(lambda: mirror.committed_offsets().get((TOPIC, 0)) == RECORDS, 120), (
                mirror.committed_offsets(),
                store.offset_writes,
            )
            assert await until(lambda: IntakeCounts.from_counters(store.counters()).total == RECORDS, 30)
        finally:
            await stop_runtime(runtime)

    run_over_brokers(scenario, [bus])

    assert store.offset_writes > _StoreFailingOnce.fail_at, "the failing commit was never met"
    assert store.writers[0] != store.writers[-1], f"every batch was settled in the same thread: {store.writers}"
    assert any("commit" in name for name in store.writers), store.writers
    counts = IntakeCounts.from_counters(store.counters())
    assert (counts.applied, dict(counts.skipped), dict(counts.dead_lettered)) == (RECORDS, {}, {})
    reopened = MetadataMirror.open(tmp_path)
    assert {urn: reopened.aspect_json(urn, "status") for urn in removed} == {
        urn: {"removed": value} for urn, value in removed.items()
    }
