"""`verify_all` across processes: each worker opens the ledger itself, then reads and checks whole batches of
incidents, so rows never cross a pipe; only incident ids go out and reports come back, in the ledger's order.

Workers are forked when this process runs no other thread (quick, and nothing half-held is copied), else started by
a fork server. While the pool runs, this process's objects are frozen out of the collector (`gc.freeze`), as Python's
documentation advises before a fork: a worker's collections never walk what it inherited.
A worker receives the key registry's public document, never a private key.
"""

from __future__ import annotations

import gc
import multiprocessing
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from libs.ledger.store import LedgerStore
from libs.ledger.verify import VerificationReport, verify_batch
from libs.signing.keys import KeyRegistry

_worker: dict[str, Any] = {}


def verify_in_pool(url: str, registry: KeyRegistry, batches: list[list[str]], workers: int) -> list[VerificationReport]:
    context = multiprocessing.get_context("fork" if threading.active_count() == 1 else "forkserver")
    gc.freeze()  # a forked worker's collections then skip everything it inherited, and leave those pages shared
    try:
        with ProcessPoolExecutor(
            min(workers, len(batches)), mp_context=context, initializer=_start, initargs=(url, registry.to_document())
        ) as pool:
            return [report for reports in pool.map(_verify, batches) for report in reports]
    finally:
        gc.unfreeze()


def _start(url: str, registry_document: dict[str, object]) -> None:
    _worker["store"] = LedgerStore(url)
    _worker["registry"] = KeyRegistry.from_document(registry_document)


def _verify(incident_ids: list[str]) -> list[VerificationReport]:
    return verify_batch(_worker["store"], incident_ids, _worker["registry"])
