"""The broker lost mid-flight: an embedded broker killed while incidents run, a new, empty one started at the
same address while the services keep running, more incidents submitted to it, and one `modelguard republish`.

The figures: completed, lost (never published), duplicated (more than one distinct ``Published`` event), and
the seconds from the new broker's start until every incident is published. ``modelguard bench broker-restart``
prints them; the e2e test asserts them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from contracts.registry import all_topics
from libs.bus.embedded_broker import EmbeddedBroker, free_loopback_port, start_embedded_broker
from libs.bus.producer import publish_signed
from libs.bus.topics import ensure_topics
from libs.ledger import LedgerStore
from libs.settings import Settings
from libs.signing.keys import KeyRegistry
from modelguard.incident_log import incident_events
from modelguard.stack import stack_down, stack_up, topic_partitions


@dataclass
class RestartFigures:
    in_flight: int
    after: int
    completed: int = 0
    lost: dict[str, str] = field(default_factory=dict)
    """incident -> the last event it reached"""
    duplicated: list[str] = field(default_factory=list)
    recover_s: float = float("nan")
    republished: int = 0
    outage_s: float = 2.0
    paused: list[str] = field(default_factory=list)
    """Services that stopped their consumers while the broker was away (``libs/bus/broker_reachability``)."""

    def lines(self) -> list[str]:
        total = self.in_flight + self.after
        return [
            f"broker restart: {self.in_flight} incidents in flight when the broker was lost, {self.after} submitted to "
            f"the new one after {self.outage_s:.0f}s without a broker, one republish ({self.republished} events "
            f"re-sent); {len(self.paused)} services stopped their consumers meanwhile",
            f"  completed {self.completed}/{total}, lost {len(self.lost)}, duplicated {len(self.duplicated)}, "
            f"{self.recover_s:.1f}s from the new broker to the last publication",
        ]


def _types(store: LedgerStore, registry: KeyRegistry, incident: str) -> list[str]:
    return [e.event.meta.event_type for e in incident_events(store, incident, registry)]


def _wait(condition: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.5)
    return condition()


def run_broker_restart(
    settings: Settings,
    reports_for: Callable[[Settings, int], list],
    republish: Callable[[], int],
    in_flight: int = 2,
    after: int = 2,
    timeout_s: float = 900.0,
    outage_s: float = 2.0,
) -> RestartFigures:
    """``reports_for(settings, n)`` makes n signed evaluation reports; ``republish()`` re-sends the last logged
    event of every unfinished incident and says how many it sent. The new broker starts ``outage_s`` after the
    old one is gone: longer than a few seconds and the services notice, stop their consumers and probe."""
    logs = settings.home / "logs"
    port = free_loopback_port()
    brokers: list[EmbeddedBroker] = [start_embedded_broker(logs / "broker-1.log", port=port)]
    figures = RestartFigures(in_flight, after, outage_s=outage_s)
    try:
        stack_up(settings, brokers[0].bootstrap, owns_broker=True)
        registry = KeyRegistry.load(settings.key_registry_path)
        store = LedgerStore(settings.ledger_url)
        reports = reports_for(settings, in_flight + after)
        first, later = reports[:in_flight], reports[in_flight:]
        asyncio.run(publish_signed(brokers[0].bootstrap, first))
        started = [r.event.meta.incident_id for r in first]
        _wait(lambda: all("RegressionDetected" in _types(store, registry, i) for i in started), timeout_s)
        brokers[0].stop()  # memory only: every record and every committed offset is gone with it
        time.sleep(outage_s)
        figures.paused = services_that_paused(logs)
        brokers.append(start_embedded_broker(logs / "broker-2.log", port=port))
        up = time.monotonic()
        topics = [*all_topics(), *settings.mcl_topics]
        partitions = topic_partitions(settings, owns_broker=True)  # as stack_up made them
        asyncio.run(ensure_topics(brokers[1].bootstrap, topics, partitions))
        asyncio.run(publish_signed(brokers[1].bootstrap, later))
        figures.republished = republish()
        incidents = [r.event.meta.incident_id for r in reports]
        _wait(lambda: all("Published" in _types(store, registry, i) for i in incidents), timeout_s)
        figures.recover_s = time.monotonic() - up
        for incident in incidents:
            types = _types(store, registry, incident)
            if "Published" not in types:
                figures.lost[incident] = types[-1] if types else "nothing logged"
            elif types.count("Published") > 1:
                figures.duplicated.append(incident)
        figures.completed = len(incidents) - len(figures.lost)
        return figures
    finally:
        stack_down(settings)
        for broker in brokers:
            broker.stop()


def services_that_paused(logs: Path) -> list[str]:
    """The services whose log says they stopped their consumers because the broker was unreachable."""
    return sorted(
        path.stem
        for path in logs.glob("*.log")
        if "unreachable" in path.read_text(errors="replace") and "consumers stopped" in path.read_text(errors="replace")
    )


def republish_once(settings: Settings, wait_s: float = 120.0) -> Callable[[], int]:
    """One `modelguard republish` as a function: the last logged event of every unfinished incident re-sent,
    and re-sent again until each has moved on or ``wait_s`` passed; how many incidents it sent for."""
    from modelguard.audit_republish import republish_until_moved, resend
    from modelguard.stack import read_state

    def run() -> int:
        state = read_state(settings.home)
        assert state is not None, "no stack is running"
        store = LedgerStore(settings.ledger_url)
        registry = KeyRegistry.load(settings.key_registry_path)
        result = republish_until_moved(
            lambda resends: resend(state.bootstrap, resends, settings.kafka_idempotence), store, registry, None, wait_s
        )
        return len(result.rounds[0]) if result.rounds else 0

    return run
