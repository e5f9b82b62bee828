"""How many partitions each topic gets on a broker ModelGuard owns: the embedded one the stack starts, or a test's
or a bench's own (``stack_up(owns_broker=True)``), both Tansu.

One, when every service runs as one process and ``MODELGUARD_KAFKA_PARTITIONS`` is not set. The embedded broker
(Tansu, memory storage) answers a fetch of one partition as soon as a record arrives, but holds a fetch of several
until its wait ends and reads every partition again at each look. Measured on a 2-core machine: a record took 1.7 ms
p50 from its publish to its consumer on a one-partition topic, 55 ms on three (100 ms fetch wait); six idle consumers
cost the broker 0.1% of a core on one partition each, 4.1% on three; ten incidents at once, the broker used 2.5
instead of 5.8 CPU-seconds (``modelguard bench pipeline``).

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
