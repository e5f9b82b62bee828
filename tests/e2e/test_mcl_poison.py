"""Issue 13 over the real broker: malformed MetadataChangeLog records among good ones from DataHub's golden
files. Every good record is applied, every bad one dead-lettered with its reason (an oversize one with its
first bytes only), valid irrelevant ones skipped and counted; the mirror's stored offsets reach the end of
the topics; a context service killed mid-batch resumes from its stored offsets, nothing lost or doubled, even
when none of its Kafka commits survived (the mirror's offsets, committed with its state, decide)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from libs.bus.dead_letters import DeadLetter, read_dead_letters
from modelguard.stack import pid_alive, read_state, stack_down, stack_status, stack_up
from services.context.intake_counts import IntakeCounts
from tests.support.mcl_poison import (
    ASSERTION,
    GoodRecord,
    PoisonCase,
    golden_available,
    good_records,
    malformed_count,
    poison_cases,
    timeseries_runs,
)
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

VERSIONED, TIMESERIES = "MetadataChangeLog_Versioned_v1", "MetadataChangeLog_Timeseries_v1"
DEADLINE_S = 120.0
MCL_GROUP = "modelguard-context-datahub-mcl"
Sent = tuple[str, str, bytes]  # topic, key, value


@pytest.fixture
def context_stack(tmp_path: Path) -> Iterator[RunningStack]:
    if not golden_available():
        pytest.skip("DataHub golden files absent")
    with running_stack(tmp_path / "stack", services=("context",)) as running:
        yield running


@pytest.fixture
def small_batch_context_stack(tmp_path: Path) -> Iterator[RunningStack]:
    """Batches of 3 records: the stream spans many, so a kill lands in the middle of one."""
    if not golden_available():
        pytest.skip("DataHub golden files absent")
    env = {"MODELGUARD_MCL_BATCH_MAX_RECORDS": "3"}
    with running_stack(tmp_path / "stack", env=env, services=("context",)) as running:
        yield running


def _interleaved(good: Sequence[GoodRecord], cases: Sequence[PoisonCase]) -> list[Sent]:
    """Good and bad records alternating, as an outsider's topic mixes them; the timeseries runs in order."""
    bad = [(VERSIONED, case.name, case.raw) for case in cases]
    fine = [(VERSIONED, record.name, record.raw) for record in good]
    mixed: list[Sent] = []
    while bad or fine:
        mixed.extend(bad[:3])
        mixed.extend(fine[:1])
        bad, fine = bad[3:], fine[1:]
    runs = [(TIMESERIES, "run-event", case.raw) for case in timeseries_runs()]  # one key: one partition, in order
    return [*mixed[:10], *runs, *mixed[10:]]


async def _send(bootstrap: str, records: Sequence[Sent]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_request_size=8 * 1024 * 1024)
    await producer.start()
    try:
        for topic, key, value in records:
            await producer.send_and_wait(topic, value, key=key.encode())
    finally:
        await producer.stop()


async def _end_offsets(bootstrap: str) -> dict[tuple[str, int], int]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        partitions = [
            TopicPartition(topic, p) for topic in (VERSIONED, TIMESERIES) for p in consumer.partitions_for_topic(topic)
        ]
        ends = await consumer.end_offsets(partitions)
    finally:
        await consumer.stop()
    return {(tp.topic, tp.partition): offset for tp, offset in ends.items()}


def _mirror_file(stack: RunningStack) -> Path:
    return stack.settings.state_dir("context") / "mirror.sqlite"


def _stored(stack: RunningStack) -> tuple[dict[tuple[str, int], int], IntakeCounts]:
    path = _mirror_file(stack)
    if not path.exists():
        return {}, IntakeCounts()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        offsets = {(t, p): o for t, p, o in db.execute("SELECT topic, partition, next_offset FROM offsets")}
        counters = dict(db.execute("SELECT name, value FROM counters").fetchall())
    except sqlite3.OperationalError:  # the service has not created its tables yet
        return {}, IntakeCounts()
    finally:
        db.close()
    return offsets, IntakeCounts.from_counters(counters)


def _stored_aspect(stack: RunningStack, urn: str, aspect_name: str) -> str | None:
    db = sqlite3.connect(f"file:{_mirror_file(stack)}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT json FROM aspects WHERE urn = ? AND aspect = ?", (urn, aspect_name)).fetchone()
    finally:
        db.close()
    return row[0] if row else None


def _poison_urns_in_the_mirror(stack: RunningStack) -> list[tuple[str, str]]:
    """Aspects stored under the urns the bad records name (the timeseries runs' assertion aside: it is good)."""
    db = sqlite3.connect(f"file:{_mirror_file(stack)}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT urn, aspect FROM aspects WHERE urn LIKE '%poison%' OR urn LIKE '%spaceship%'")
        return sorted((urn, aspect) for urn, aspect in rows if urn != ASSERTION)
    finally:
        db.close()


def _wait_for_the_end_of_the_topics(stack: RunningStack) -> IntakeCounts:
    ends = {tp: end for tp, end in asyncio.run(_end_offsets(stack.bootstrap)).items() if end > 0}
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        offsets, counts = _stored(stack)
        if all(offsets.get(tp, 0) >= end for tp, end in ends.items()):
            assert {tp: offsets.get(tp, 0) for tp in ends} == ends  # never beyond the end
            return counts
        time.sleep(0.2)
    raise AssertionError(f"the mirror's offsets {_stored(stack)[0]} did not reach the topics' ends {ends}")


def _letters(stack: RunningStack) -> dict[str, list[DeadLetter]]:
    by_key: dict[str, list[DeadLetter]] = {}
    for letter in read_dead_letters(stack.bootstrap):
        if letter.service == "context" and letter.key is not None:
            by_key.setdefault(letter.key, []).append(letter)
    return by_key


def test_every_good_record_is_applied_and_every_bad_one_dead_lettered_with_its_reason(
    context_stack: RunningStack,
) -> None:
    good, cases = good_records(), poison_cases()
    assert malformed_count(cases) >= 40
    records = _interleaved(good, cases)
    asyncio.run(_send(context_stack.bootstrap, records))

    counts = _wait_for_the_end_of_the_topics(context_stack)

    assert counts.total == len(records)
    assert counts.applied == len(good) + 3  # the run event and its two redeliveries, idempotently
    expected_skips: dict[str, int] = {"older-timeseries-run": 1}
    for case in cases:
        if case.verdict == "skipped":
            expected_skips[case.reason] = expected_skips.get(case.reason, 0) + 1
    assert dict(counts.skipped) == expected_skips
    bad = [case for case in cases if case.verdict == "dead_lettered"]
    assert sum(counts.dead_lettered.values()) == len(bad)

    letters = _letters(context_stack)
    assert {case.name: [letter.reason for letter in letters.get(case.name, [])] for case in bad} == {
        case.name: [case.reason] for case in bad
    }
    assert not any(record.name in letters for record in good)
    oversize = letters["schema-24000-columns"][0]
    assert len(oversize.value) <= 4096 and "sha256 " in oversize.detail
    for record in good:
        assert _stored_aspect(context_stack, record.urn, record.aspect_name) is not None, record.name
    assert _poison_urns_in_the_mirror(context_stack) == []  # nothing of a bad record was stored


def test_a_context_service_killed_mid_batch_resumes_from_its_stored_offsets_nothing_lost_or_doubled(
    small_batch_context_stack: RunningStack,
) -> None:
    stack = small_batch_context_stack
    good, cases = good_records(), poison_cases()
    records = _interleaved(good, [case for case in cases if case.name != "schema-24000-columns"])
    half = len(records) // 2
    asyncio.run(_send(stack.bootstrap, records[:half]))
    deadline = time.monotonic() + DEADLINE_S
    while _stored(stack)[1].total < 10 and time.monotonic() < deadline:  # mid-stream, batches of 3
        time.sleep(0.02)
    state = read_state(stack.settings.home)
    assert state is not None
    victim = state.services["context"]
    assert victim is not None
    _kill(victim)  # no shutdown: whatever was applied but not settled is lost with it
    settled_at_the_kill = _stored(stack)[1].total
    assert 0 < settled_at_the_kill < len(records)

    asyncio.run(_send(stack.bootstrap, records[half:]))
    _wait_started_again(stack, victim)  # by the stack's supervisor
    counts = _wait_for_the_end_of_the_topics(stack)

    assert counts.total == len(records)  # each record counted once, when its state and offset were committed
    assert counts.applied == len(good) + 3
    letters = _letters(stack)
    for case in cases:
        if case.verdict == "dead_lettered" and case.name != "schema-24000-columns":
            assert case.name in letters, case.name  # at least once: a kill after the letter may repeat it
    for record in good:
        assert _stored_aspect(stack, record.urn, record.aspect_name) is not None, record.name
    assert json.loads(_stored_aspect(stack, good[0].urn, good[0].aspect_name) or "{}")


def test_the_mirror_s_offsets_decide_where_a_restarted_service_resumes_when_no_kafka_commit_survived(
    small_batch_context_stack: RunningStack,
) -> None:
    """The crash between the mirror's commit and Kafka's, at its worst: every group offset lost."""
    stack = small_batch_context_stack
    good, cases = good_records(), poison_cases()
    records = _interleaved(good, [case for case in cases if case.name != "schema-24000-columns"])
    half = len(records) // 2
    asyncio.run(_send(stack.bootstrap, records[:half]))
    before = _wait_for_the_end_of_the_topics(stack)
    assert before.total == half
    state = read_state(stack.settings.home)
    assert state is not None and state.services["context"] is not None
    _kill(state.services["context"])
    stack_down(stack.settings)  # and its supervisor: nothing restarts it while the group is rewound
    asyncio.run(_rewind_group_to_zero(stack.bootstrap))

    asyncio.run(_send(stack.bootstrap, records[half:]))
    stack_up(stack.settings, stack.bootstrap, services=("context",), owns_broker=True)
    counts = _wait_for_the_end_of_the_topics(stack)

    assert counts.total == len(records) and counts.applied == len(good) + 3  # the first half not read again


async def _rewind_group_to_zero(bootstrap: str) -> None:
    """Join the service's group while the service is down (it gets every partition) and commit offset 0."""
    consumer = AIOKafkaConsumer(
        VERSIONED, TIMESERIES, bootstrap_servers=bootstrap, group_id=MCL_GROUP, enable_auto_commit=False
    )
    await consumer.start()
    try:
        deadline = time.monotonic() + DEADLINE_S
        expected = {TopicPartition(t, p) for t in (VERSIONED, TIMESERIES) for p in consumer.partitions_for_topic(t)}
        while consumer.assignment() != expected:  # the killed member's session expires first
            assert time.monotonic() < deadline, f"assigned {consumer.assignment()}, not {expected}"
            await consumer.getmany(timeout_ms=500)
        await consumer.commit(dict.fromkeys(expected, 0))
        assert all([await consumer.committed(tp) == 0 for tp in expected])
    finally:
        await consumer.stop()


def _wait_started_again(stack: RunningStack, victim: int) -> None:
    deadline = time.monotonic() + 120
    status = stack_status(stack.settings)["context"]
    while not (status.running and status.pid != victim) and time.monotonic() < deadline:
        time.sleep(0.1)
        status = stack_status(stack.settings)["context"]
    assert status.running and status.pid != victim and status.restarts >= 1


def _kill(pid: int) -> None:
    """SIGKILL the service's process group (the stack started it in a session of its own) and wait it out."""
    os.killpg(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
