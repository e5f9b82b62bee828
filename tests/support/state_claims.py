"""Processes racing for the same inputs' claims, for the tests of shared state: each worker opens the state
database itself (as a replica would) and tries every input once, all of them starting at one signal."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Event
from pathlib import Path

from libs.bus.processed_inputs import ProcessedInputs
from libs.state.port import StateDatabase
from libs.state.postgres_state import PostgresState
from libs.state.sqlite_state import SqliteState


def state_at(where: str) -> StateDatabase:
    """A PostgreSQL URL, or a folder holding each service's SQLite files."""
    if "://" in where:
        return PostgresState(where)
    return SqliteState(lambda service: Path(where) / service)


def _race(where: str, owner: str, event_ids: list[str], start: Event, won: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    inputs = ProcessedInputs.of(state_at(where), "diagnoser")
    start.wait()
    for event_id in event_ids:
        if inputs.claim(event_id, owner, lease_s=60.0) is None:
            won.put((event_id, owner))
    won.put(("", owner))  # this worker is through


def race_for_claims(where: str, event_ids: list[str], workers: int) -> list[tuple[str, str]]:
    """(event id, winner) for each claim won, by ``workers`` processes trying all ``event_ids`` at once."""
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    won = context.Queue()
    processes = [
        context.Process(target=_race, args=(where, f"worker-{i}", event_ids, start, won)) for i in range(workers)
    ]
    for process in processes:
        process.start()
    start.set()
    results, finished = [], 0
    while finished < workers:
        event_id, owner = won.get(timeout=120)
        if event_id:
            results.append((event_id, owner))
        else:
            finished += 1
    for process in processes:
        process.join(timeout=30)
    return results
