"""Two diagnoser processes in one consumer group over the real broker, their state in PostgreSQL: the incidents
split between them, each diagnosed once, all finished; and a replica killed mid-diagnosis leaves its input to
another, which finishes it once."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from libs.bus.producer import publish_signed
from libs.events.codec import SignedEvent
from modelguard.bench import synthetic_reports, wait_all
from modelguard.consumer_groups import partition_of, wait_for_stable_group
from modelguard.stack import pid_alive, read_state
from tests.support.postgres import fresh_schema, libpq_url, postgres_server
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker, pytest.mark.postgres]

REPLICAS = ("diagnoser", "diagnoser-2")
CLAIMS = "SELECT event_id, owner, done FROM state_diagnoser_claims"


def _covering_every_partition(reports: list[SignedEvent], partitions: int, per_partition: int) -> list[SignedEvent]:
    """Incidents whose events land on every partition, so each replica's share of the partitions has work."""
    chosen: dict[int, list[SignedEvent]] = {p: [] for p in range(partitions)}
    for report in reports:
        bucket = chosen[partition_of(report.event.meta.incident_id, partitions)]
        if len(bucket) < per_partition:
            bucket.append(report)
    assert all(len(b) == per_partition for b in chosen.values()), "not enough synthetic incidents to cover them"
    return [report for bucket in chosen.values() for report in bucket]


def _claims(url: str) -> dict[str, tuple[str, int]]:
    with psycopg.connect(libpq_url(url)) as connection:
        return {row[0]: (row[1], row[2]) for row in connection.execute(CLAIMS)}


def _diagnosed(stack: RunningStack, done: dict[str, list[SignedEvent]]) -> dict[str, str]:
    """Each incident's ContextCollected event id, after checking the ledger holds one diagnosis per incident."""
    inputs = {}
    for incident, events in done.items():
        types = Counter(e.event.meta.event_type for e in events)
        assert types["DiagnosisCompleted"] == 1, f"{incident} diagnosed {types['DiagnosisCompleted']} times"
        [collected] = [e for e in events if e.event.meta.event_type == "ContextCollected"]
        inputs[incident] = collected.event.meta.event_id
    return inputs


def _handled_by(stack: RunningStack) -> Counter[tuple[str, str]]:
    """(replica, event id) for each ContextCollected a replica's log says it handled."""
    handled: Counter[tuple[str, str]] = Counter()
    for replica in REPLICAS:
        for line in (stack.settings.home / "logs" / f"{replica}.log").read_text().splitlines():
            words = line.split("diagnoser handled ContextCollected ", 1)
            if len(words) == 2:
                handled[(replica, words[1].split()[0])] += 1
    return handled


def _replica_of(owner: str) -> str:
    return owner.split("@", 1)[0]


def test_two_diagnosers_share_the_incidents_and_a_killed_one_leaves_its_input_to_the_other(tmp_path: Path) -> None:
    with postgres_server() as server, fresh_schema(server) as url:
        env = {"MODELGUARD_LEDGER_URL": url, "MODELGUARD_REPLICAS_DIAGNOSER": "2"}
        with running_stack(tmp_path / "home", env) as stack:
            settings = stack.settings
            assert settings.state_url is not None, "the state follows the PostgreSQL ledger"
            assert set(REPLICAS) <= set(stack.state.services)
            wait_for_stable_group(stack.bootstrap, "modelguard-diagnoser", members=2, timeout_s=120)

            candidates = synthetic_reports(settings, 24)
            reports = _covering_every_partition(candidates[:18], settings.kafka_partitions, per_partition=1)
            reports.append(next(r for r in candidates if r not in reports))
            asyncio.run(publish_signed(stack.bootstrap, reports))
            incidents = [r.event.meta.incident_id for r in reports]
            done = wait_all(stack.ledger, stack.registry, incidents, timeout_s=240.0 * len(reports))
            assert sorted(done) == sorted(incidents), "every incident finished"
            inputs = _diagnosed(stack, done)

            claims = _claims(url)
            owners = {_replica_of(claims[event_id][0]) for event_id in inputs.values()}
            assert owners == set(REPLICAS), f"both replicas diagnosed some incidents: {owners}"
            assert all(claims[event_id][1] == 1 for event_id in inputs.values())
            handled = _handled_by(stack)
            for event_id in inputs.values():
                by = {replica: n for (replica, handled_id), n in handled.items() if handled_id == event_id}
                assert sum(by.values()) == 1, f"{event_id} handled {by}: once, by one replica"

            # a rebalance mid-incident: kill the replica that has an input in hand
            [late] = [r for r in candidates if r not in reports][:1]
            asyncio.run(publish_signed(stack.bootstrap, [late]))
            deadline = time.monotonic() + 300
            in_hand = None
            while in_hand is None and time.monotonic() < deadline:
                in_hand = next(((e, o) for e, (o, d) in _claims(url).items() if not d and e not in claims), None)
                time.sleep(0.2)
            assert in_hand is not None, "the late incident reached a diagnoser"
            event_id, owner = in_hand
            victim = (read_state(settings.home) or stack.state).services[_replica_of(owner)]
            assert victim is not None
            os.killpg(victim, signal.SIGKILL)
            while pid_alive(victim):
                time.sleep(0.05)
            finished = wait_all(stack.ledger, stack.registry, [late.event.meta.incident_id], timeout_s=600)
            assert list(finished) == [late.event.meta.incident_id], "the killed replica's input was finished"
            assert _diagnosed(stack, finished) == {late.event.meta.incident_id: event_id}
            taken_by, done_flag = _claims(url)[event_id]
            assert done_flag == 1 and taken_by != owner, "another replica (or the restarted one) took it over"
