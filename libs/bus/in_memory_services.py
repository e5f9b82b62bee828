"""Services in one process over an in-memory Kafka: each one's own runtime (``libs/bus/runtime.py``), its brokers on
the cluster (``libs/bus/in_memory_broker.py``), started, and stopped as a service process stops.

What a runtime does between bytes and bytes is the same code a service process runs: it verifies each input's
envelope and schema, dead-letters what it cannot accept with a reason, claims the input and records its outputs
(a redelivered input is answered with its recorded outputs, not handled again), retries a transient failure from
the same offset with the central policy's backoff until ``delivery.max_attempts``, signs what the handler returns
and publishes it with the same headers. What a process does around that and this does not: no health server, no
ready file, no watch on the broker's reachability or on consumer lag (there is no broker to lose). The
definitions' timers run, and each definition's ``on_stop`` runs when the services stop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager

from libs.bus.in_memory_broker import in_memory_brokers
from libs.bus.in_memory_kafka import InMemoryKafka
from libs.bus.runtime import ServiceDefinition, ServiceRuntime
from libs.settings import Settings
from libs.signing.keys import KeyRegistry, SigningKey

Extension = Callable[[ServiceRuntime], None]
"""What a service's process adds to its runtime before it starts (``serve``'s ``extend``): another subscriber."""


@asynccontextmanager
async def services_in_memory(
    cluster: InMemoryKafka,
    services: Sequence[tuple[ServiceDefinition, SigningKey]],
    settings: Settings,
    registry: KeyRegistry,
    extensions: Mapping[str, Extension] | None = None,
) -> AsyncIterator[list[ServiceRuntime]]:
    """Every service consuming from ``cluster`` inside the block; stopped gracefully when it ends (in the order
    given: put the ledger last, so its ``on_stop`` checkpoint covers what the others published)."""
    runtimes = [ServiceRuntime(d, settings, key, registry, brokers=in_memory_brokers(cluster)) for d, key in services]
    for runtime in runtimes:
        extend = (extensions or {}).get(runtime.definition.name)
        if extend is not None:
            extend(runtime)
    started: list[ServiceRuntime] = []
    try:
        for runtime in runtimes:
            started.append(runtime)
            for broker in runtime.brokers:
                await broker.start()
            runtime.start_timers()
        yield runtimes
    finally:
        for runtime in started:
            try:
                await runtime.app.stop()  # on_shutdown (timers cancelled), the brokers stopped, after_shutdown hooks
            finally:
                runtime.processed.close()
                runtime.telemetry.shutdown()
