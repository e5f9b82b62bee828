"""Command slots made ahead, so that moving a held shell into its cgroups is off the command's path.

Moving a process between cgroups waits for an RCU grace period: 5-25 ms a command measured here (cgroup v1), the largest
part of what the sandbox added around a command. A slot (``command_slot.py``: a fresh cgroup, a held shell moving into
it) needs nothing of the command: its shell starts in ``/`` with an empty environment, and bubblewrap gets the command's
working directory and environment in its arguments (``--chdir``, ``--clearenv``, ``--setenv``). So a long-lived process
(a service, the workspace runner: ``keep_spares`` at its start) keeps up to ``SPARES`` slots per shape made ahead; a
slot taken starts making its successor on a thread of its own once its command has been let go (or the slot closed
without one), not as it is taken: making a slot (a shell started, a cgroup made and joined) is this process's work
too, and done while the command was being prepared it made that preparation slower, the more so when two commands
were prepared at once. A one-shot process (the CLI's ``investigate``, an audit's
``rerun``) keeps none: it would make two shells and two cgroups only to close them at exit. A spare whose shell is gone,
or that could not be moved, is closed and a slot made on the spot, as when there is none: a spare is never anything but
a held shell that has run nothing.

At exit the spares are closed (their shells killed, their cgroups removed); a process killed before that leaves shells
that exit when their stdin closes and cgroups that the next ModelGuard process removes (``remove_stale``). A child
forked from this process forgets the spares: they are its parent's.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from pathlib import Path

from libs.sandbox.command_slot import CommandSlot, SlotShape

SERVICE_SPARES = 2
"""Slots a service keeps ahead per shape: the services run up to two commands of an incident at once."""
SPARES = 0
"""Slots this process keeps ahead per shape: none until ``keep_spares``."""
_WHERE = Path("/")

CLOSE_WAIT_S = 30.0
"""How long ``close_spares`` waits for slots being made to be done."""

_lock = threading.Condition()
_spares: dict[SlotShape, list[CommandSlot]] = {}
_making: dict[SlotShape, int] = {}


def keep_spares(count: int = SERVICE_SPARES) -> None:
    """Keep ``count`` slots per shape made ahead from the next command on: for a process that runs many commands."""
    global SPARES
    SPARES = count


def take_slot(shape: SlotShape) -> CommandSlot:
    """A slot of ``shape`` for a bubblewrap command: a spare when one is ready, else one made now."""
    with _lock:
        ready = _spares.get(shape, [])
        spare = ready.pop() if ready else None
    if spare is not None and not spare.usable():
        spare.close()
        spare = None
    slot = spare if spare is not None else CommandSlot(shape, _WHERE, {})
    slot.when_in_use(lambda: _replenish(shape))
    return slot


def _replenish(shape: SlotShape) -> None:
    """Start making the spares of ``shape`` that are missing, each on a thread of its own."""
    with _lock:
        wanted = max(0, SPARES - len(_spares.get(shape, [])) - _making.get(shape, 0))
        _making[shape] = _making.get(shape, 0) + wanted
    for _ in range(wanted):
        threading.Thread(target=_make_spare, args=(shape,), name="modelguard-spare-slot", daemon=True).start()


def close_spares() -> None:
    """Close every spare, once the slots being made are done (at exit, and for tests that count processes or
    cgroups: with ``SPARES`` 0 first, nothing is made ahead afterwards)."""
    with _lock:
        _lock.wait_for(lambda: not any(_making.values()), CLOSE_WAIT_S)
        spares = [slot for slots in _spares.values() for slot in slots]
        _spares.clear()
    for slot in spares:
        with contextlib.suppress(Exception):
            slot.close()


def _make_spare(shape: SlotShape) -> None:
    try:
        made: CommandSlot | None = CommandSlot(shape, _WHERE, {})
    except Exception:  # no cgroup or no shell now: the next command makes its own slot and says why if it fails
        made = None
    with _lock:
        kept = made is not None and len(_spares.setdefault(shape, [])) < SPARES
        if made is not None and kept:
            _spares[shape].append(made)
    if made is not None and not kept:
        made.close()  # still counted as being made until it is closed: close_spares waits for that
    with _lock:
        _making[shape] -= 1
        _lock.notify_all()


def _forget_in_child() -> None:
    global _lock
    _lock = threading.Condition()
    _spares.clear()
    _making.clear()


atexit.register(close_spares)
os.register_at_fork(after_in_child=_forget_in_child)
