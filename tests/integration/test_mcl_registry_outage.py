"""A schema registry that does not answer, over the real broker: the context service's batch stops at the first
record that needs it, the records before it are settled, the rest come again after the delivery policy's backoff
and, once the registry answers, every record is applied and counted once; nothing is dead-lettered for it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from datahub.metadata.schema_classes import StatusClass

from libs.bus.dead_letters import read_dead_letters
from libs.datahub.mcl.avro_schema import shipped_mcl_schema_json
from tests.e2e.test_mcl_poison import _send, _stored
from tests.support.loopback_http import LoopbackServer, Reply, Request
from tests.support.running_stack import RunningStack, running_stack
from tests.unit.mcl.mcl_test_inputs import avro_message, json_message, mcl_record

pytestmark = pytest.mark.broker

TOPIC = "MetadataChangeLog_Versioned_v1"
DEADLINE_S = 120.0


class _Registry(LoopbackServer):
    def route(self, request: Request) -> Reply:
        if request.path.startswith("/schemas/ids/18"):
            return Reply(200, {"schema": shipped_mcl_schema_json(), "schemaType": "AVRO"}, {})
        return Reply(404, {"error_code": 40403, "message": "Schema not found"}, {})


@pytest.fixture
def registry() -> Iterator[_Registry]:
    with _Registry() as server:
        server.fail("GET", r"^/schemas/ids/18", 503, times=2, message="registry restarting")
        yield server


@pytest.fixture
def context_stack(tmp_path: Path, registry: _Registry) -> Iterator[RunningStack]:
    env = {"MODELGUARD_SCHEMA_REGISTRY_URL": registry.base_url}
    with running_stack(tmp_path / "stack", env=env, services=("context",)) as running:
        yield running


def test_records_that_need_an_unreachable_registry_wait_for_it_and_count_once(
    context_stack: RunningStack, registry: _Registry
) -> None:
    urns = [f"urn:li:dataset:(urn:li:dataPlatform:hive,outage.t{i},PROD)" for i in range(6)]
    first = json_message(mcl_record(urns[0], "status", StatusClass(removed=False))).encode()  # needs no registry
    rest = [avro_message(mcl_record(urn, "status", StatusClass(removed=False))) for urn in urns[1:]]
    records = [(TOPIC, "same-key", raw) for raw in [first, *rest]]  # one key: one partition, one batch
    asyncio.run(_send(context_stack.bootstrap, records))

    deadline = time.monotonic() + DEADLINE_S
    while _stored(context_stack)[1].total < len(records) and time.monotonic() < deadline:
        time.sleep(0.2)

    offsets, counts = _stored(context_stack)
    assert counts.total == len(records) and counts.applied == len(records)
    assert sum(offsets.values()) == len(records)
    assert registry.count("GET", r"^/schemas/ids/18") >= 3  # two refusals, then the schema
    log = (context_stack.settings.home / "logs" / "context.log").read_text()
    retries = [json.loads(line) for line in log.splitlines() if "will retry" in line]
    assert retries and "registry restarting" in retries[0]["message"]
    assert not [letter for letter in read_dead_letters(context_stack.bootstrap) if letter.service == "context"]
