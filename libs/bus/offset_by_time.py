"""The first offset of a partition whose record is no older than a time, found by reading records.

Kafka answers this itself (ListOffsets by timestamp, ``offsets_for_times``), and Apache Kafka answers it
right. The embedded Tansu broker does not: it returns offset 0 for any time. So the broker's answer is taken
as a hint and checked by reading the record there and the one before; when the check fails, a binary search
over the partition reads one record per step (about 17 reads for 100,000 records). Record timestamps are
assumed not to go backwards along the partition, which holds for DataHub's MCL topics (one producer, create
time) and always for log-append time.
"""

from __future__ import annotations

from typing import Any

from aiokafka import TopicPartition


async def first_offset_since(probe: Any, partition: TopicPartition, since_ms: int, timeout_ms: int = 5000) -> int:
    """``probe``: a started consumer with no group; it is assigned ``partition`` and moved around."""
    probe.assign([partition])
    begin = int((await probe.beginning_offsets([partition]))[partition])  # aiokafka is untyped: offsets are ints
    end = int((await probe.end_offsets([partition]))[partition])

    async def timestamp_at(offset: int) -> int | None:
        """The timestamp of the first record at or after ``offset`` (None past the end)."""
        if offset >= end:
            return None
        probe.seek(partition, offset)
        batch = await probe.getmany(partition, timeout_ms=timeout_ms, max_records=1)
        records = batch.get(partition) or []
        return int(records[0].timestamp) if records else None

    async def is_first(offset: int) -> bool:
        if offset < end:
            at = await timestamp_at(offset)
            if at is None or at < since_ms:
                return False
        if offset == begin:
            return True
        before = await timestamp_at(offset - 1)
        return before is not None and before < since_ms

    hinted = (await probe.offsets_for_times({partition: since_ms})).get(partition)
    hint = end if hinted is None else int(hinted.offset)
    if begin <= hint <= end and await is_first(hint):
        return hint
    low, high = begin, end
    while low < high:
        middle = (low + high) // 2
        at = await timestamp_at(middle)
        if at is None or at >= since_ms:
            high = middle
        else:
            low = middle + 1
    return low
