"""How many partitions each topic gets on a broker ModelGuard owns: the embedded one the stack starts, or a test's
or a bench's own (``stack_up(owns_broker=True)``), both Tansu.

One, when every service runs as one process and ``MODELGUARD_KAFKA_PARTITIONS`` is not set. The embedded broker
(Tansu, memory storage) reads every partition of a fetch again at each look it takes while the fetch waits: ten
incidents at once, the broker used 2.5 instead of 5.8 CPU-seconds on one partition (``modelguard bench pipeline``,
2026-12-05). The partitions do not change how long a record waits for its consumer: Tansu never wakes a waiting
fetch when a record arrives, it finds the record at the fetch's next look, one partition or three alike
(``modelguard/bus_hop_probe.py``). The figures of 2026-12-05 that said otherwise (1.7 ms p50 on one partition, 55 on
three) timed a consumer whose fetch went out after the record was published.

Replicas of a service need a partition each (``modelguard/replicas.py``): when a service runs replicas, or the
variable is set, the topics get ``MODELGUARD_KAFKA_PARTITIONS`` (default 3) as before. Topics on someone else's
Kafka (``MODELGUARD_KAFKA_BOOTSTRAP``) are never created with this: there the variable alone decides (a Kafka
broker answers a waiting fetch as soon as a record arrives, whatever the partitions).
"""

from __future__ import annotations

from collections.abc import Mapping

PARTITIONS_ENV = "MODELGUARD_KAFKA_PARTITIONS"


def embedded_partitions(environ: Mapping[str, str], replicas: Mapping[str, int], configured: int) -> int:
    """The partitions of each topic the stack creates on its own embedded broker. ``replicas``: processes per service;
    ``configured``: ``Settings.kafka_partitions`` (the variable, or its default)."""
    if environ.get(PARTITIONS_ENV, "").strip() or any(count > 1 for count in replicas.values()):
        return configured
    return 1
