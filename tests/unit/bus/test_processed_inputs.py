"""A handled input is remembered with the envelopes it produced, across a restart of the service; an input in
hand is claimed by one replica at a time (SQLite files here; tests/integration/test_state_postgres.py runs the
same rules on PostgreSQL)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from libs.bus.processed_inputs import ProcessedInputs, Pruned, gone, replica_name
from libs.state.sqlite_state import SqliteState
from tests.support.state_claims import race_for_claims


def _inputs(root: Path) -> ProcessedInputs:
    return ProcessedInputs.of(SqliteState(lambda service: root / service), "diagnoser")


def test_outputs_are_remembered_across_reopen(tmp_path: Path) -> None:
    store = _inputs(tmp_path)
    assert store.outputs_of("a" * 32) is None
    store.mark("a" * 32, [b'{"payload":"x"}', b'{"payload":"y"}'])
    store.mark("b" * 32, [])
    store.mark("a" * 32, [b"ignored: first record wins"])
    store.close()
    assert (tmp_path / "diagnoser" / "processed.sqlite").is_file()
    reopened = _inputs(tmp_path)
    assert reopened.outputs_of("a" * 32) == [b'{"payload":"x"}', b'{"payload":"y"}']
    assert reopened.outputs_of("b" * 32) == []


def test_a_claimed_input_is_held_for_its_owner_until_done(tmp_path: Path) -> None:
    first, second = _inputs(tmp_path), _inputs(tmp_path)
    assert first.claim("e1", "replica-a", lease_s=60) is None
    assert first.claim("e1", "replica-a", lease_s=60) is None, "its owner may claim it again (a retry)"
    held = second.claim("e1", "replica-b", lease_s=60)
    assert held is not None and held.owner == "replica-a" and not held.done and 50 < held.remaining_s <= 60
    first.mark("e1", [b"out"], owner="replica-a")
    after = second.claim("e1", "replica-b", lease_s=60)
    assert after is not None and after.done, "a finished input is never claimed again"
    assert second.outputs_of("e1") == [b"out"]


def test_a_lease_that_runs_out_is_taken_over_and_the_old_owner_knows(tmp_path: Path) -> None:
    first, second = _inputs(tmp_path), _inputs(tmp_path)
    assert first.claim("e2", "replica-a", lease_s=0.3) is None
    assert first.renew("e2", "replica-a", lease_s=0.3)
    time.sleep(0.5)
    assert second.claim("e2", "replica-b", lease_s=60) is None
    assert not first.renew("e2", "replica-a", lease_s=60), "the old owner's renewal fails once another holds it"
    assert first.claim("e2", "replica-a", lease_s=60) is not None


def test_a_released_claim_is_free_at_once(tmp_path: Path) -> None:
    first, second = _inputs(tmp_path), _inputs(tmp_path)
    assert first.claim("e3", "replica-a", lease_s=60) is None
    first.release("e3", "replica-b")  # not its owner: nothing happens
    assert second.claim("e3", "replica-b", lease_s=60) is not None
    first.release("e3", "replica-a")
    assert second.claim("e3", "replica-b", lease_s=60) is None


def test_failed_attempts_are_counted_across_reopen(tmp_path: Path) -> None:
    store = _inputs(tmp_path)
    assert [store.failed_attempt("x"), store.failed_attempt("x"), store.failed_attempt("y")] == [1, 2, 1]
    store.close()
    assert _inputs(tmp_path).failed_attempt("x") == 3


def test_processes_racing_for_the_same_inputs_win_each_once(tmp_path: Path) -> None:
    event_ids = [f"race-{i}" for i in range(40)]
    won = race_for_claims(str(tmp_path), event_ids, workers=3)
    assert Counter(event_id for event_id, _ in won) == Counter(event_ids), "every input claimed exactly once"


def test_a_claim_of_a_process_that_is_gone_is_taken_over_before_its_lease_ends(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    mine = replica_name("diagnoser")
    dead = mine.replace(f"/{os.getpid()}/", f"/{child.pid}/")
    assert gone(dead) and not gone(mine)
    assert not gone(dead.replace("@", "@another-host-")), "another host's process: only its lease speaks"
    store = _inputs(tmp_path)
    assert store.claim("e4", dead, lease_s=600) is None
    held = store.claim("e4", mine, lease_s=600)
    assert held is not None and held.owner == dead
    assert store.take_over("e4", dead, mine, lease_s=600)
    assert not store.take_over("e4", dead, "a-third-replica", lease_s=600), "taken over once"
    assert store.claim("e4", "a-third-replica", lease_s=600) is not None


def test_a_state_file_written_before_the_port_is_read_as_it_was(tmp_path: Path) -> None:
    old = tmp_path / "diagnoser" / "processed.sqlite"
    old.parent.mkdir()
    with sqlite3.connect(old) as connection:  # the tables as the services created them before libs/state
        connection.execute("CREATE TABLE processed (event_id TEXT PRIMARY KEY, outputs TEXT NOT NULL)")
        connection.execute("CREATE TABLE attempts (input_id TEXT PRIMARY KEY, failed INTEGER NOT NULL)")
        connection.execute("INSERT INTO processed VALUES ('old', '[\"{}\"]')")
        connection.execute("INSERT INTO attempts VALUES ('x', 2)")
    connection.close()
    store = _inputs(tmp_path)
    assert store.outputs_of("old") == [b"{}"] and store.failed_attempt("x") == 3
    assert store.claim("new", "replica-a", lease_s=60) is None, "the claims table is added beside the old ones"


def _age(store: ProcessedInputs, event_id: str, seconds: float) -> None:
    """As if the input had been done (or its claim renewed) ``seconds`` earlier."""
    store._tables.run(
        "UPDATE {claims} SET lease_until = lease_until - :s WHERE event_id = :e", {"s": seconds, "e": event_id}
    )


def test_outputs_of_inputs_done_longer_ago_than_kept_are_dropped_and_the_inputs_stay_done(tmp_path: Path) -> None:
    store = _inputs(tmp_path)
    store.mark("old", [b'{"payload":"x"}'], owner="replica-a")
    store.mark("empty", [], owner="replica-a")
    store.mark("new", [b'{"payload":"y"}'], owner="replica-a")
    assert store.claim("busy", "replica-a", lease_s=60) is None  # in hand, not done: never pruned
    for event_id in ("old", "empty", "busy"):
        _age(store, event_id, 1000)
    assert store.prune_outputs(keep_s=500) == 2
    assert store.outputs_of("old") == Pruned() and store.outputs_of("empty") == Pruned()
    assert store.outputs_of("new") == [b'{"payload":"y"}']
    assert store.outputs_of("busy") is None
    held = store.claim("old", "replica-b", lease_s=60)
    assert held is not None and held.done, "a pruned input is still done: never handled again"
    assert store.prune_outputs(keep_s=500) == 0


def test_pruning_goes_on_batch_after_batch(tmp_path: Path) -> None:
    store = _inputs(tmp_path)
    for n in range(7):
        store.mark(f"e{n}", [b"out"], owner="replica-a")
        _age(store, f"e{n}", 1000)
    assert store.prune_outputs(keep_s=500, batch=3) == 7
    assert all(store.outputs_of(f"e{n}") == Pruned() for n in range(7))


def test_an_input_is_done_when_it_was_marked_not_when_its_lease_would_have_run_out(tmp_path: Path) -> None:
    store = _inputs(tmp_path)
    assert store.claim("e1", "replica-a", lease_s=10_000) is None
    store.mark("e1", [b"out"], owner="replica-a")
    _age(store, "e1", 500)
    assert store.prune_outputs(keep_s=100) == 1  # done 500 s ago, though its lease had 10,000 s to run


def test_the_processed_inputs_file_syncs_as_a_replayable_store_and_policy_pins_with_every_commit(
    tmp_path: Path,
) -> None:
    from libs.policy.model_policies.pins import POLICY_PINS

    state = SqliteState(lambda service: tmp_path / service)
    processed = ProcessedInputs.of(state, "diagnoser")
    processed.mark("e1", [])
    pins = state.tables("diagnoser", POLICY_PINS)
    try:
        modes = {
            name: tables.run("PRAGMA synchronous").rows[0][0]
            for name, tables in (("processed", processed._tables), ("pins", pins))
        }
    finally:
        processed.close()
        pins.close()
    assert modes == {"processed": 1, "pins": 2}  # NORMAL, FULL
    with sqlite3.connect(tmp_path / "diagnoser" / "processed.sqlite") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
