"""Verifying the whole ledger in batches and across processes finds exactly what one process checking one
incident at a time finds, in the same order, tampered rows included; a helper process that dies loses nothing."""

from __future__ import annotations

import base64
import json
import multiprocessing
import os
import time
from collections.abc import Sequence
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

import pytest

from libs.ledger import LedgerStore, verify_all, verify_incident, verify_pool
from libs.ledger.rows import IncidentHead
from libs.ledger.verify import VerificationReport, incident_batches, verify_batch
from libs.signing.keys import KeyRegistry
from tests.support.sample_events import (
    SampleKeys,
    abstained_incident,
    passed_incident,
    repaired_incident,
    sample_incident_id,
)
from tests.unit.ledger.conftest import Attacker


def _ledger(store: LedgerStore, keys: SampleKeys) -> list[str]:
    names = [f"par-{i}" for i in range(12)]
    builders = (repaired_incident, abstained_incident, passed_incident)
    for i, name in enumerate(names):
        store.append_batch(builders[i % 3](keys, name))
    return names


def _tamper(store: LedgerStore, attacker: Attacker) -> None:
    (row,) = attacker.read(
        "SELECT position, envelope FROM ledger_events WHERE incident_id = ? AND sequence = 3",
        sample_incident_id("par-3"),
    )
    envelope = json.loads(str(row[1]))
    envelope["signatures"][0]["sig"] = base64.b64encode(b"\0" * 64).decode()
    attacker.execute("UPDATE ledger_events SET envelope = ? WHERE position = ?", json.dumps(envelope), row[0])
    attacker.execute("DELETE FROM ledger_events WHERE incident_id = ? AND sequence = 1", sample_incident_id("par-7"))
    attacker.execute(
        "UPDATE ledger_events SET producer = 'publisher' WHERE incident_id = ? AND sequence = 2",
        sample_incident_id("par-10"),
    )


def test_the_pool_reports_what_one_incident_at_a_time_reports(
    store: LedgerStore, keys: SampleKeys, attacker: Attacker
) -> None:
    names = _ledger(store, keys)
    _tamper(store, attacker)
    one_by_one = [verify_incident(store, h.incident_id, keys.registry) for h in store.incidents()]

    pooled = verify_all(store, keys.registry, workers=2)
    in_process = verify_all(store, keys.registry, workers=1)

    assert pooled == in_process == one_by_one
    failed = {r.incident_id for r in pooled if not r.ok}
    assert failed == {sample_incident_id(n) for n in ("par-3", "par-7", "par-10")}
    assert {r.incident_id for r in pooled} == {sample_incident_id(n) for n in names}
    found = [p for r in pooled if r.incident_id == sample_incident_id("par-3") for p in r.problems]
    assert (
        [p.what for p in found if p.check == "signature"]
        == [p.what for p in found if "envelope rejected (bad-signature)" in p.what]
        != []
    )


def test_batches_keep_the_incidents_order_and_hold_about_the_asked_events() -> None:
    heads = [IncidentHead(f"i{n}", size, n, "", "", "", None) for n, size in enumerate([6, 3, 2, 6, 6, 1])]  # type: ignore[arg-type]

    batches = incident_batches(heads, events=8)

    assert [i for batch in batches for i in batch] == [h.incident_id for h in heads]
    assert batches == [["i0", "i1"], ["i2", "i3"], ["i4", "i5"]]


class CheckedBatches:
    """A batch check (`verify_batch`, passed to the helpers as `check`) that writes which process took which batch
    to a file, has a helper act on its n-th batch, and holds this process's first batch until helpers have taken
    `helper_batches`, so that they surely take part whatever the machine's load. Picklable: a fork server's helper
    receives it."""

    def __init__(self, record: Path, helper_batches: int, helper_act: HelperAct | None = None) -> None:
        self.record, self.helper_batches, self.helper_act = record, helper_batches, helper_act
        self.parent = os.getpid()

    def __call__(
        self, store: LedgerStore, incident_ids: Sequence[str], registry: KeyRegistry
    ) -> list[VerificationReport]:
        with self.record.open("a") as out:
            out.write(f"{os.getpid()} {incident_ids[0]}\n")
        if os.getpid() != self.parent:
            if self.helper_act is not None:
                self.helper_act(len(self.taken_by_helpers()))
        elif len(self.taken_by(self.parent)) == 1:
            deadline = time.monotonic() + 60
            while len(self.taken_by_helpers()) < self.helper_batches and time.monotonic() < deadline:
                time.sleep(0.01)
        return verify_batch(store, incident_ids, registry)

    def lines(self) -> list[tuple[int, str]]:
        return [(int(pid), first) for pid, first in (line.split() for line in self.record.read_text().splitlines())]

    def taken_by(self, pid: int) -> list[str]:
        return [first for who, first in self.lines() if who == pid]

    def taken_by_helpers(self) -> list[str]:
        return [first for who, first in self.lines() if who != self.parent]


class HelperAct:
    """What a helper does on its `on_batch`-th batch."""

    def __init__(self, on_batch: int) -> None:
        self.on_batch = on_batch

    def __call__(self, taken: int) -> None:
        if taken == self.on_batch:
            self.act()

    def act(self) -> None: ...


class Dies(HelperAct):
    def act(self) -> None:
        os._exit(3)


class Raises(HelperAct):
    def act(self) -> None:
        raise RuntimeError("the helper's database went away")


class FailsOn:
    """A batch check whose batch starting with `incident` cannot be read, in any process."""

    def __init__(self, incident: str) -> None:
        self.incident = incident

    def __call__(
        self, store: LedgerStore, incident_ids: Sequence[str], registry: KeyRegistry
    ) -> list[VerificationReport]:
        if incident_ids[0] == self.incident:
            raise RuntimeError(f"cannot read {self.incident}")
        return verify_batch(store, incident_ids, registry)


def _small_batches(store: LedgerStore) -> list[list[str]]:
    batches = incident_batches(store.incidents(), events=1)  # one incident a batch
    assert len(batches) == 12
    return batches


@pytest.mark.parametrize("start", ["default", "forkserver"])
def test_this_process_and_a_helper_split_the_batches_and_report_in_the_ledgers_order(
    store: LedgerStore, keys: SampleKeys, attacker: Attacker, tmp_path: Path, start: str
) -> None:
    """`default`: forked when this process runs no other thread, else from a fork server (the path taken when it
    runs others, where what a helper receives crosses a pickle)."""
    _ledger(store, keys)
    _tamper(store, attacker)
    batches = _small_batches(store)
    in_process = verify_all(store, keys.registry, workers=1)
    checks = CheckedBatches(tmp_path / "taken", helper_batches=2)
    context = multiprocessing.get_context("forkserver") if start == "forkserver" else None

    split = verify_pool.verify_in_pool(store, keys.registry, batches, 2, context=context, check=checks)

    assert split == in_process
    assert len(checks.taken_by_helpers()) >= 2 and checks.taken_by(checks.parent) != []
    assert sorted(first for _, first in checks.lines()) == sorted(b[0] for b in batches)  # each batch checked once


@pytest.mark.parametrize("helper_act", [Dies(2), Raises(2)], ids=["killed", "raises"])
def test_the_batches_of_a_helper_that_stops_before_it_reports_are_checked_here(
    store: LedgerStore,
    keys: SampleKeys,
    attacker: Attacker,
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    helper_act: HelperAct,
) -> None:
    _ledger(store, keys)
    _tamper(store, attacker)
    batches = _small_batches(store)
    in_process = verify_all(store, keys.registry, workers=1)
    checks = CheckedBatches(tmp_path / "taken", helper_batches=2, helper_act=helper_act)

    split = verify_pool.verify_in_pool(store, keys.registry, batches, 2, check=checks)

    assert split == in_process
    lost = checks.taken_by_helpers()
    assert len(lost) == 2  # it checked its first batch and stopped on its second: neither was reported
    assert sorted(checks.taken_by(checks.parent)) == sorted(b[0] for b in batches)  # so this process checked all
    assert "Traceback" not in capfd.readouterr().err


def test_an_error_of_the_batch_itself_is_raised_here(store: LedgerStore, keys: SampleKeys) -> None:
    _ledger(store, keys)
    batches = _small_batches(store)

    with pytest.raises(RuntimeError, match="cannot read"):
        verify_pool.verify_in_pool(store, keys.registry, batches, 2, check=FailsOn(batches[3][0]))


def _hold_and_die(taken: Synchronized[int]) -> None:
    taken.get_lock().acquire()
    os._exit(9)


def test_a_counter_left_locked_by_a_dead_helper_ends_the_audit_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    context = multiprocessing.get_context("forkserver")
    taken: Synchronized[int] = context.Value("q", 0)
    holder = context.Process(target=_hold_and_die, args=(taken,))
    holder.start()
    holder.join()
    monkeypatch.setattr(verify_pool, "COUNTER_WAIT_S", 0.2)

    with pytest.raises(verify_pool.CounterLost, match="a helper died holding it"):
        verify_pool._take(taken)


def test_a_process_that_froze_its_objects_before_keeps_them_frozen(store: LedgerStore, keys: SampleKeys) -> None:
    import gc

    def walked(thing: object) -> bool:
        return any(candidate is thing for candidate in gc.get_objects())

    _ledger(store, keys)
    batches = incident_batches(store.incidents(), 2)
    built_at_start = ["a container the collector tracks"]
    gc.freeze()  # as a service process does at start (libs/bus/service_collector.py)
    try:
        verify_pool.verify_in_pool(store, keys.registry, batches, workers=2)
        assert not walked(built_at_start)
    finally:
        gc.unfreeze()
    built_later = ["another"]
    verify_pool.verify_in_pool(store, keys.registry, batches, workers=2)
    assert walked(built_later)  # frozen only while the helpers ran
