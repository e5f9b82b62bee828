"""A nudge from whoever published to a topic to the service processes that read it: on a broker the stack owns.

Tansu 0.6 looks at its storage once when a fetch arrives and, finding nothing, sleeps the rest of the fetch's wait
(its fetch loop sleeps the whole remaining wait when that is under 250 ms) and answers empty: a record published
meanwhile waits for that fetch to end and the next one to be sent, 10 ms p50 and 50 ms at most at the stack's
100 ms wait, at every hop of an incident (``modelguard/bus_hop_probe.py``). Kafka answers a waiting fetch as soon
as a record arrives, and needs none of this.

So on a broker the stack owns (its embedded Tansu, a test's, a bench's) a service's consumer sends its fetches with
the shortest wait and, after one that found nothing, sends the next only when its doorbell rings or the stack's fetch
wait has passed (``libs/bus/fetch_gate.py``); a publisher rings the doorbells of the topic's readers once the broker has
acknowledged the record, so the fetch the ring lets go finds it. A ring is only a hint: one lost (a full socket
buffer, a reader that registered after the ring) costs at most the fetch wait, as before; a ring from anyone else
on the machine costs its reader one fetch that finds nothing.

The doorbells of one stack are registered in one folder (``MODELGUARD_BUS_DOORBELLS``, set by the stack for the
services on a broker it owns): ``<folder>/<topic>/<name>`` for each reader process and topic, where ``<name>`` is
the reader's Unix datagram socket in Linux's abstract namespace (so no path length limits the folder, and nothing is
left on the disk but the registration). A reader binds before it registers, so a registered name that refuses a ring
is a reader gone without unregistering (killed): the ringer removes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import secrets
import socket
import sys
from collections.abc import Sequence
from pathlib import Path

ABSTRACT_PREFIX = b"\0modelguard-doorbell-"
TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
"""A Kafka topic's name; anything else (``..``, a ``/``) names no folder of the registry."""
RING = b"\x01"

log = logging.getLogger("modelguard.bus.doorbell")


def supported() -> bool:
    """Abstract Unix sockets are Linux's."""
    return sys.platform.startswith("linux")


def topic_folder(folder: Path, topic: str) -> Path | None:
    """Where a topic's readers register; None for a name that is not a Kafka topic's."""
    if TOPIC.fullmatch(topic) is None or topic in (".", ".."):
        return None
    return folder / topic


class Doorbells:
    """Rings the doorbells registered in ``folder`` (none when it is None or absent)."""

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder if folder is not None and supported() else None
        self._socket: socket.socket | None = None

    def ring(self, topic: str) -> int:
        """Ring every reader registered for ``topic``; how many were rung. Never raises: a ring is a hint."""
        if self.folder is None:
            return 0
        readers = topic_folder(self.folder, topic)
        if readers is None:
            return 0
        try:
            names = os.listdir(readers)
        except OSError:
            return 0
        rung = 0
        for name in names:
            try:
                self._sender().sendto(RING, ABSTRACT_PREFIX + name.encode())
                rung += 1
            except ConnectionRefusedError:  # registered, not bound: a reader gone without unregistering
                with contextlib.suppress(OSError):
                    (readers / name).unlink()
            except BlockingIOError:  # its queue is full: it has rings waiting already
                rung += 1
            except OSError as exc:
                log.debug("could not ring %s for %s: %s", name, topic, exc)
        return rung

    def _sender(self) -> socket.socket:
        if self._socket is None:
            sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            sender.setblocking(False)
            self._socket = sender
        return self._socket

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class DoorbellReceiver:
    """One process's doorbell for the topics it reads: how many times it has rung (``rings``), and a wait for the
    next ring. Open it within the event loop that waits on it."""

    def __init__(self, folder: Path, topics: Sequence[str]) -> None:
        self.folder = folder
        self.topics = tuple(topics)
        self.name = f"{os.getpid()}-{secrets.token_hex(6)}"
        self.rings = 0
        self._socket: socket.socket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._next_ring: asyncio.Future[None] | None = None
        self._registered: list[Path] = []

    def open(self) -> None:
        """Bind the socket, then register it for each topic. Raises OSError when either fails (nothing is left
        registered then)."""
        if not supported():
            raise OSError("doorbells need Linux's abstract Unix sockets")
        receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            receiver.setblocking(False)
            receiver.bind(ABSTRACT_PREFIX + self.name.encode())
            for topic in self.topics:
                readers = topic_folder(self.folder, topic)
                if readers is None:
                    raise OSError(f"{topic!r} is not a Kafka topic's name")
                readers.mkdir(parents=True, exist_ok=True)
                (readers / self.name).touch()
                self._registered.append(readers / self.name)
            self._loop = asyncio.get_running_loop()
            self._next_ring = self._loop.create_future()
            self._loop.add_reader(receiver.fileno(), self._drain)
        except BaseException:
            receiver.close()
            self._unregister()
            raise
        self._socket = receiver

    def _drain(self) -> None:
        assert self._socket is not None and self._loop is not None and self._next_ring is not None
        rung = False
        while True:
            try:
                self._socket.recv(16)
            except OSError:  # drained (BlockingIOError), or nothing more to read
                break
            rung = True
        if rung:
            self.rings += 1
            rang, self._next_ring = self._next_ring, self._loop.create_future()
            rang.set_result(None)

    async def wait_past(self, rings: int, timeout_s: float) -> bool:
        """Until the doorbell has rung more than ``rings`` times in all, or ``timeout_s``; whether it rang."""
        if self.rings != rings:
            return True
        if self._next_ring is None:
            await asyncio.sleep(timeout_s)
            return False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._next_ring), timeout_s)
        return self.rings != rings

    def close(self) -> None:
        """Unregister, then close the socket."""
        self._unregister()
        if self._socket is not None:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(self._socket.fileno())
            self._socket.close()
            self._socket = None

    def _unregister(self) -> None:
        for path in self._registered:
            with contextlib.suppress(OSError):
                path.unlink()
        self._registered = []
