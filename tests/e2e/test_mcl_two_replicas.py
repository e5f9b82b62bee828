"""Two context services in one consumer group over the real broker, their metadata mirror on real PostgreSQL
(MODELGUARD_STATE_URL): the MCL topics' partitions split between them, every record counted once across both,
every good record applied, every bad one dead-lettered, and both wrote to the shared mirror."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from libs.datahub.mcl.mirror_store_postgres import PostgresMirrorStore
from modelguard.stack import REPO_ROOT, service_environment, terminate
from services.context.intake_counts import IntakeCounts
from tests.e2e.test_mcl_poison import TIMESERIES, VERSIONED, _end_offsets, _interleaved, _send
from tests.support.mcl_poison import golden_available, good_records, poison_cases
from tests.support.postgres import fresh_schema, libpq_url, postgres_server
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker, pytest.mark.postgres]

DEADLINE_S = 180.0


@pytest.fixture
def state_url() -> Iterator[str]:
    with postgres_server() as server, fresh_schema(server) as url:
        yield url


@pytest.fixture
def two_replicas(tmp_path: Path, state_url: str) -> Iterator[tuple[RunningStack, str]]:
    if not golden_available():
        pytest.skip("DataHub golden files absent")
    env = {"MODELGUARD_STATE_URL": state_url, "MODELGUARD_MCL_BATCH_MAX_RECORDS": "4"}
    with running_stack(tmp_path / "first", env=env, services=("context",)) as first:
        second_home = tmp_path / "second"
        second_env = {
            **service_environment(first.settings, first.bootstrap),
            **env,
            "MODELGUARD_HOME": str(second_home),
            "MODELGUARD_KEYS_DIR": str(first.settings.keys_dir),
            "MODELGUARD_POLICY_DIR": str(first.settings.policy_dir),
        }
        second_env.pop("MODELGUARD_HEALTH_PORT", None)  # no health server: the first replica has the port
        (second_home / "logs").mkdir(parents=True)
        with (second_home / "logs" / "context.log").open("ab") as log:
            second = subprocess.Popen(
                [sys.executable, "-m", "services.context.main"],
                cwd=REPO_ROOT,
                env=second_env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            _wait_for(lambda: (second_home / "run" / "context.ready").exists(), "the second replica to be ready")
            yield first, state_url
        finally:
            terminate(second.pid, grace_s=15.0)


def test_two_replicas_split_the_partitions_and_count_every_record_once(
    two_replicas: tuple[RunningStack, str],
) -> None:
    stack, state_url = two_replicas
    good, cases = good_records(), poison_cases()
    records = _interleaved(good, [case for case in cases if case.name != "schema-24000-columns"])
    asyncio.run(_send(stack.bootstrap, records))
    ends = {tp: end for tp, end in asyncio.run(_end_offsets(stack.bootstrap)).items() if end > 0}
    store = PostgresMirrorStore(state_url)
    try:
        _wait_for(lambda: all(store.offsets().get(tp, 0) >= end for tp, end in ends.items()), "the topics' ends")
        counts = IntakeCounts.from_counters(store.counters())
        assert {tp: store.offsets()[tp] for tp in ends} == ends
        assert counts.total == len(records) and counts.applied == len(good) + 3
        bad = [case for case in cases if case.verdict == "dead_lettered" and case.name != "schema-24000-columns"]
        assert sum(counts.dead_lettered.values()) == len(bad)
        for record in good:
            assert store.aspect_json(record.urn, record.aspect_name) is not None, record.name
    finally:
        store.close()
    with psycopg.connect(libpq_url(state_url)) as connection:
        writers = connection.execute("SELECT COUNT(DISTINCT writer) FROM context_mirror_feed").fetchone()
    assert writers is not None and writers[0] == 2  # both replicas applied records to the shared mirror
    assert {tp[0] for tp in ends} <= {VERSIONED, TIMESERIES} and len(ends) >= 2


def _wait_for(condition, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)
