"""The MCL start policy's values, and finding the first offset no older than a time when the broker's own
answer is wrong (as the embedded broker's is)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from aiokafka import TopicPartition

from libs.bus.offset_by_time import first_offset_since
from libs.bus.start_policy import StartPolicy, StartPolicyError, parse_start_policy
from libs.settings import SettingsError, load_settings


def test_the_policy_reads_latest_earliest_and_durations_and_names_a_bad_value() -> None:
    assert parse_start_policy("latest") == StartPolicy("latest")
    assert parse_start_policy(" Earliest ") == StartPolicy("earliest")
    assert parse_start_policy("90m") == StartPolicy("max_age", 5400.0)
    assert parse_start_policy("7d") == StartPolicy("max_age", 604800.0)
    for bad in ("", "yesterday", "0h", "-1d", "12"):
        with pytest.raises(StartPolicyError, match="must be latest, earliest or a positive duration"):
            parse_start_policy(bad)


def test_settings_default_to_latest_and_a_bad_value_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODELGUARD_MCL_START", raising=False)
    assert load_settings().mcl_start == StartPolicy("latest")
    monkeypatch.setenv("MODELGUARD_MCL_START", "last week")
    with pytest.raises(SettingsError, match=r"^MODELGUARD_MCL_START must be latest, earliest"):
        load_settings()


@dataclass
class Record:
    offset: int
    timestamp: int


class Partition:
    """A consumer over one partition of records with these timestamps, whose broker answers ``hint``."""

    def __init__(self, timestamps: list[int], hint: int | None, begin: int = 0) -> None:
        self.records = [Record(begin + i, t) for i, t in enumerate(timestamps)]
        self.begin, self.end, self.hint = begin, begin + len(timestamps), hint
        self.position = begin
        self.reads = 0

    def assign(self, partitions: list[TopicPartition]) -> None:
        self.tp = partitions[0]

    async def beginning_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {self.tp: self.begin}

    async def end_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        return {self.tp: self.end}

    async def offsets_for_times(self, query: dict[TopicPartition, int]) -> dict[TopicPartition, Any]:
        return {self.tp: None if self.hint is None else type("Found", (), {"offset": self.hint})()}

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.position = offset

    async def getmany(self, tp: TopicPartition, timeout_ms: int, max_records: int) -> dict[TopicPartition, Any]:
        self.reads += 1
        return {tp: [r for r in self.records if r.offset >= self.position][:max_records]}


TP = TopicPartition("MetadataChangeLog_Versioned_v1", 0)
TIMES = [10 * i for i in range(1000)]  # offset i has timestamp 10 i


@pytest.mark.parametrize(
    ("since", "expected"), [(0, 0), (5, 1), (10, 1), (4995, 500), (9990, 999), (9991, 1000), (99999, 1000)]
)
def test_a_wrong_hint_is_caught_and_a_binary_search_finds_the_first_recent_enough_record(
    since: int, expected: int
) -> None:
    wrong = Partition(TIMES, hint=0)  # the embedded broker: offset 0 for any time
    assert asyncio.run(first_offset_since(wrong, TP, since)) == expected
    assert wrong.reads <= 2 + 11  # the hint checked, then about log2(1000) reads


def test_a_right_hint_is_checked_with_two_reads_and_taken() -> None:
    right = Partition(TIMES, hint=500)
    assert asyncio.run(first_offset_since(right, TP, 4995)) == 500
    assert right.reads == 2


def test_a_partition_whose_first_records_were_deleted_searches_from_its_beginning() -> None:
    trimmed = Partition(TIMES[300:], hint=0, begin=300)
    assert asyncio.run(first_offset_since(trimmed, TP, 0)) == 300
    assert asyncio.run(first_offset_since(trimmed, TP, 4995)) == 500
