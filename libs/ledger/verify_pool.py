"""`verify_all` across processes: this process checks batches of incidents itself while `workers - 1` helper
processes check others, each taking the next unchecked batch from a shared counter and reading it from the ledger
itself, so rows never cross a pipe; only incident ids go out and reports come back, put in the ledger's order.

This process takes part (rather than waiting on a pool of `workers` processes) because it would otherwise sit idle
on one of the cores: on two cores that is one process started instead of two, and half the batches checked where
nothing is pickled at all.

A helper sends its reports once, when the counter runs out. A helper that dies first (killed, out of memory, its own
error) loses nothing: every batch it took whose reports never arrived is checked again here, where an error that
is the batch's own is then raised. Helpers are forked when this process runs no other thread (quick, and nothing
half-held is copied), else started by a fork server. While they run, this process's objects are frozen out of the
collector (`gc.freeze`), as Python's documentation advises before a fork: a helper's collections never walk what it
inherited; they are thawed after, unless this process had frozen its objects before (a service does at start). A
helper receives the key registry's public document, never a private key.
"""

from __future__ import annotations

import gc
import multiprocessing
import threading
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from multiprocessing.context import BaseContext
from multiprocessing.process import BaseProcess
from multiprocessing.sharedctypes import Synchronized

from libs.ledger.store import LedgerStore
from libs.ledger.verify import VerificationReport, verify_batch
from libs.signing.keys import KeyRegistry

Checked = dict[int, list[VerificationReport]]
"""Reports by the index of the batch they answer."""
BatchCheck = Callable[[LedgerStore, Sequence[str], KeyRegistry], list[VerificationReport]]
COUNTER_WAIT_S = 30.0
"""Longest wait for the batch counter's lock, which is held only while an index is read and moved on."""


class CounterLost(RuntimeError):
    """The batch counter cannot be taken any more: the audit stops instead of waiting for ever."""


def verify_in_pool(
    store: LedgerStore,
    registry: KeyRegistry,
    batches: Sequence[Sequence[str]],
    workers: int,
    *,
    context: BaseContext | None = None,
    check: BatchCheck = verify_batch,
) -> list[VerificationReport]:
    """The reports of every batch, in the batches' order. `context`: how helpers start (default: fork when this
    process runs no other thread, else a fork server). `check`: what checks a batch (a module-level function, as a
    fork server's helper receives it by name)."""
    context = context or multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
    taken: Synchronized[int] = context.Value("q", 0)
    helpers: list[tuple[BaseProcess, Connection]] = []
    frozen_before = gc.get_freeze_count() > 0  # a service process froze what it built at start: it stays frozen
    gc.freeze()  # a forked helper's collections then skip everything it inherited, and leave those pages shared
    try:
        for _ in range(min(workers, len(batches)) - 1):
            receiving, sending = context.Pipe(duplex=False)
            helper = context.Process(  # type: ignore[attr-defined]
                target=_help,
                args=(store.url, registry.to_document(), batches, taken, sending, check),
                daemon=True,
                name="ledger-verify",
            )
            helper.start()
            sending.close()  # this process keeps only the receiving end: a dead helper then reads as EOF
            helpers.append((helper, receiving))
        checked = _check_until_none_left(store, registry, batches, taken, check)
        for helper, receiving in helpers:
            checked.update(_received(receiving))
            helper.join()
    finally:
        for helper, receiving in helpers:
            if helper.is_alive():
                helper.terminate()
                helper.join()
            receiving.close()
        if not frozen_before:
            gc.unfreeze()
    for index in range(len(batches)):
        if index not in checked:  # taken by a helper that died before it reported
            checked[index] = check(store, batches[index], registry)
    return [report for index in range(len(batches)) for report in checked[index]]


def _check_until_none_left(
    store: LedgerStore,
    registry: KeyRegistry,
    batches: Sequence[Sequence[str]],
    taken: Synchronized[int],
    check: BatchCheck,
) -> Checked:
    checked: Checked = {}
    while (index := _take(taken)) < len(batches):
        checked[index] = check(store, batches[index], registry)
    return checked


def _take(taken: Synchronized[int]) -> int:
    """The next batch's index. The counter's lock is held for a moment; a helper killed in that moment would hold it
    for good, so a wait of `COUNTER_WAIT_S` ends the audit with that reason rather than hanging it."""
    lock = taken.get_lock()
    if not lock.acquire(timeout=COUNTER_WAIT_S):
        raise CounterLost(f"the batch counter stayed locked for {COUNTER_WAIT_S:g} s: a helper died holding it")
    try:
        index = taken.value
        taken.value = index + 1
    finally:
        lock.release()
    return index


def _received(receiving: Connection) -> Checked:
    try:
        checked: Checked = receiving.recv()
    except (EOFError, OSError):  # the helper died before it reported: its batches are checked again
        return {}
    return checked


def _help(
    url: str,
    registry_document: dict[str, object],
    batches: Sequence[Sequence[str]],
    taken: Synchronized[int],
    sending: Connection,
    check: BatchCheck,
) -> None:
    """A helper process: check batches until none is left, then send their reports in one message."""
    store = LedgerStore(url)
    try:
        checked = _check_until_none_left(store, KeyRegistry.from_document(registry_document), batches, taken, check)
    except Exception:  # its batches are checked again by the process that started it, which raises the error
        return  # itself if it is the batch's own: a traceback here would only say it twice
    else:
        sending.send(checked)
    finally:
        sending.close()
        store.close()
