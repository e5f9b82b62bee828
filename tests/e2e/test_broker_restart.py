"""The broker is lost mid-flight and a new, empty one comes up at the same address while the services keep
running. Incidents that were in flight and incidents submitted after the restart all complete after one
`modelguard republish`: no service carries its position from the dead broker into the new one."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from contracts.registry import all_topics
from libs.bus.embedded_broker import free_loopback_port, start_embedded_broker
from libs.bus.producer import publish_signed
from libs.bus.topics import ensure_topics
from libs.ledger import LedgerStore
from libs.settings import load_settings
from libs.signing.keys import KeyRegistry
from modelguard.bench import synthetic_reports
from modelguard.cli import main
from modelguard.incident_log import incident_events
from modelguard.stack import stack_down, stack_up
from tests.support.running_stack import environment

pytestmark = [pytest.mark.broker, pytest.mark.e2e]


def event_types(store: LedgerStore, registry: KeyRegistry, incident: str) -> list[str]:
    return [e.event.meta.event_type for e in incident_events(store, incident, registry)]


def wait_until(condition, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.5)
    return condition()


@pytest.mark.timeout(1200)
def test_incidents_in_flight_and_after_a_broker_restart_all_complete_after_one_republish(tmp_path: Path) -> None:
    if os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"):
        pytest.skip("restarts the embedded broker; an external Kafka is not ours to restart")
    home = tmp_path / "home"
    port = free_loopback_port()
    with environment({"MODELGUARD_HOME": str(home)}):
        settings = load_settings()
        first = start_embedded_broker(home / "logs" / "broker-1.log", port=port)
        second = None
        try:
            stack_up(settings, first.bootstrap)
            registry = KeyRegistry.load(settings.key_registry_path)
            store = LedgerStore(settings.ledger_url)
            reports = synthetic_reports(settings, 4)
            before, after = reports[:2], reports[2:]
            asyncio.run(publish_signed(first.bootstrap, before))
            in_flight = [r.event.meta.incident_id for r in before]
            assert wait_until(
                lambda: all("RegressionDetected" in event_types(store, registry, i) for i in in_flight), 300
            )
            first.stop()  # everything on it is gone: it kept its records in memory
            time.sleep(2)
            second = start_embedded_broker(home / "logs" / "broker-2.log", port=port)
            asyncio.run(
                ensure_topics(second.bootstrap, [*all_topics(), *settings.mcl_topics], settings.kafka_partitions)
            )
            asyncio.run(publish_signed(second.bootstrap, after))
            assert main(["republish"]) == 0
            incidents = [r.event.meta.incident_id for r in reports]
            finished = wait_until(lambda: all("Published" in event_types(store, registry, i) for i in incidents), 600)
            stuck = {
                i: event_types(store, registry, i)[-1]
                for i in incidents
                if "Published" not in event_types(store, registry, i)
            }
            assert finished, f"not finished after one republish: {stuck}"
        finally:
            stack_down(settings)
            first.stop()
            if second is not None:
                second.stop()
