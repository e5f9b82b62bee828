"""Backing off while the broker is unreachable, and saying so once per change of state.

Left alone, a Kafka client whose broker is gone reconnects on a fixed short backoff: every consumer's fetcher,
group coordinator and metadata loop each try again every 100 ms, about fifty connection attempts a second per
service, for as long as the outage lasts. Instead, each service probes its bootstrap addresses every few
seconds (a TCP connection, nothing more). When two probes in a row find no broker, the service:

- logs one line (``unreachable``), turns not ready, and stops its consumers, which ends their retry loops;
- probes again after 1 s, 2 s, 4 s ... up to 30 s, each wait shortened by a random part (``libs/backoff.py``),
  so a fleet of services does not reconnect in step;
- when a probe connects, starts its consumers again (they join their groups and resume from what is committed
  on the broker they find: the same one, or a new one), logs one line (``reachable again after N s``) and
  turns ready.

An input being handled when the consumers stop gets ``graceful_timeout`` to finish; if it cannot (its outputs
cannot be published without a broker), it is handled again after the outage, which the processed-inputs
record makes harmless.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from libs.backoff import Backoff
from libs.bus.kafka_connection import bootstrap_addresses

log = logging.getLogger("modelguard.bus")

CHECK_EVERY_S = 3.0
CONFIRM_AFTER = 2
"""Probes in a row that must fail before the broker counts as unreachable."""


async def probe(addresses: list[tuple[str, int]], timeout_s: float = 2.0) -> str | None:
    """None when one of the addresses accepts a TCP connection, else why the last one did not."""
    why = "no address"
    for host, port in addresses:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
        except (OSError, TimeoutError) as exc:
            why = f"{host}:{port}: {exc or type(exc).__name__}"
            continue
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        return None
    return why


@dataclass
class Reachability:
    """What one service knows of its broker: pure, the clock and the random draw are passed in."""

    backoff: Backoff = field(default_factory=Backoff)
    failures: int = 0
    """Probes in a row that found no broker."""
    lost_at: float | None = None
    """When the broker was declared unreachable; None while it is reachable."""

    @property
    def unreachable(self) -> bool:
        return self.lost_at is not None

    def failed(self, now: float) -> bool:
        """Record a failed probe; True when this one makes the broker unreachable (the change of state)."""
        self.failures += 1
        if self.lost_at is None and self.failures >= CONFIRM_AFTER:
            self.lost_at = now
            return True
        return False

    def answered(self, now: float) -> float | None:
        """Record a probe that connected; the seconds the broker was unreachable, when this ends an outage."""
        lost_at, self.lost_at, self.failures = self.lost_at, None, 0
        return None if lost_at is None else now - lost_at

    def relapsed(self, lost_at: float) -> None:
        """The broker answered a probe but went again before the consumers could start: still unreachable."""
        self.lost_at, self.failures = lost_at, CONFIRM_AFTER

    def next_probe_s(self, draw: float) -> float:
        """While unreachable, the wait before the next probe (the first wait after the loss is ``base_s``)."""
        return self.backoff.delay(max(1, self.failures - CONFIRM_AFTER + 1), draw)


async def watch_reachability(
    bootstrap: str,
    service: str,
    pause: Callable[[], Awaitable[None]],
    resume: Callable[[], Awaitable[None]],
    set_ready: Callable[[bool], None],
    *,
    every_s: float = CHECK_EVERY_S,
    backoff: Backoff | None = None,
    draw: Callable[[], float] = random.random,
    clock: Callable[[], float] | None = None,
    probe_once: Callable[[list[tuple[str, int]]], Awaitable[str | None]] = probe,
) -> None:
    """Probe for as long as the service runs; pause and resume its consumers around an outage."""
    try:
        addresses = bootstrap_addresses(bootstrap)
    except ValueError as exc:
        log.warning("%s: not watching the broker's reachability: %s", service, exc)
        return
    state = Reachability(backoff or Backoff())
    now = clock or asyncio.get_running_loop().time
    wait_s = every_s
    while True:
        await asyncio.sleep(wait_s)
        why = await probe_once(addresses)
        if why is not None:
            if state.failed(now()):
                log.warning(
                    "%s: broker %s unreachable (%s): consumers stopped, probing again after %.0f s up to %.0f s",
                    service,
                    bootstrap,
                    why,
                    state.backoff.base_s,
                    state.backoff.cap_s,
                )
                set_ready(False)
                await _pause(pause, service)
            wait_s = state.next_probe_s(draw()) if state.unreachable else state.backoff.base_s  # confirm it soon
            continue
        probes = state.failures
        down_s = state.answered(now())
        wait_s = every_s
        if down_s is None:
            continue
        try:
            await resume()
        except Exception as exc:  # the broker went again while the consumers joined: back to probing
            log.warning("%s: broker %s answered but the consumers could not start (%s)", service, bootstrap, exc)
            state.relapsed(now() - down_s)
            await _pause(pause, service)
            wait_s = state.next_probe_s(draw())
            continue
        set_ready(True)
        log.info(
            "%s: broker %s reachable again after %.0f s (%d probes failed): consumers started",
            service,
            bootstrap,
            down_s,
            probes,
        )


async def _pause(pause: Callable[[], Awaitable[None]], service: str) -> None:
    try:
        await pause()
    except Exception as exc:  # the watch must outlive a consumer that would not close
        log.warning("%s: stopping the consumers: %s", service, exc)
