"""How many processes of each service the embedded stack runs: ``MODELGUARD_REPLICAS_<SERVICE>`` (for example
``MODELGUARD_REPLICAS_DIAGNOSER=2``), or ``stack up --replicas diagnoser=2``; one by default.

Replicas of a service share its consumer group, so Kafka splits the topic's partitions between them, and its state
(``libs/state``), so no input is handled twice. Each replica is an instance of its own for the supervisor: the
first keeps the service's name (``diagnoser``), the others are numbered (``diagnoser-2``), each with its own log,
ready file and health port. A replica beyond the topics' partition count would get no input: refused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

REPLICAS_PREFIX = "MODELGUARD_REPLICAS_"
INSTANCE_ENV = "MODELGUARD_INSTANCE"
"""Set in each service process: its instance name (``diagnoser-2``), for its ready file and its claims."""
MAX_REPLICAS = 16
ONE_REPLICA_ONLY = {
    "context": "the context service keeps its metadata mirror in one process's SQLite file",
}


class ReplicaCountError(ValueError):
    """A replica count that is not a number, out of range, or more than a service can run; one line."""


def replica_counts(
    environ: Mapping[str, str], services: Iterable[str], requested: Mapping[str, int] | None, partitions: int
) -> dict[str, int]:
    """Each service's count: ``requested`` first, then its variable, else 1."""
    services = list(services)
    unknown = sorted(set(requested or {}) - set(services))
    if unknown:
        raise ReplicaCountError(
            f"replicas of {', '.join(unknown)}: not a service of this stack ({', '.join(services)})"
        )
    counts = {}
    for service in services:
        variable = REPLICAS_PREFIX + service.upper()
        raw: object = (requested or {}).get(service, environ.get(variable, "").strip() or 1)
        try:
            count = int(str(raw))
        except ValueError:
            raise ReplicaCountError(f"{variable} must be a whole number of processes, got {raw!r}") from None
        if not 1 <= count <= MAX_REPLICAS:
            raise ReplicaCountError(f"{variable} must be between 1 and {MAX_REPLICAS}, got {count}")
        if count > 1 and service in ONE_REPLICA_ONLY:
            raise ReplicaCountError(f"{variable}={count}: {ONE_REPLICA_ONLY[service]}; it runs as one process")
        if count > partitions:
            raise ReplicaCountError(
                f"{variable}={count} but the topics have {partitions} partitions (MODELGUARD_KAFKA_PARTITIONS): "
                "a replica beyond the partition count would get no input"
            )
        counts[service] = count
    return counts


def instance_names(service: str, count: int) -> list[str]:
    return [service, *(f"{service}-{n}" for n in range(2, count + 1))]


def service_of(instance: str) -> str:
    """``diagnoser-2`` → ``diagnoser``; a service's own name is its first instance's."""
    service, _, number = instance.rpartition("-")
    return service if service and number.isdigit() else instance


def parse_replicas(values: Iterable[str]) -> dict[str, int]:
    """``["diagnoser=2", ...]`` from the command line."""
    counts = {}
    for value in values:
        service, sep, count = value.partition("=")
        if not sep or not count.strip().isdigit():
            raise ReplicaCountError(f"--replicas takes SERVICE=COUNT (diagnoser=2), got {value!r}")
        counts[service.strip()] = int(count)
    return counts
