"""A service's memory of the inputs it has handled and the envelopes it answered with, of the inputs a replica is
handling now (claims), and of the failed attempts at those it could not handle yet.

A redelivered input is not handled again (that work can be expensive); its recorded outputs are sent
again instead. They carry the same event ids, so consumers and the ledger treat them as duplicates, and
an output lost with a broker comes back when its input is re-sent (`modelguard republish`).

Replicas of a service share these tables (``libs/state``). Before handling an input a replica claims it: one
statement that inserts the claim, or takes over one whose lease ran out (its holder died), and returns nothing
when another live replica holds it or the input is done. The holder renews its lease while it works; marking
the input done ends the claim in the same transaction. So after a rebalance moves a partition mid-input, the new
owner of the partition waits for the old one's outputs instead of computing them again, and takes the input
over if the old one died: no input is handled twice at once, and none is lost.

The outputs are kept for as long as an input can come again from its topic, not forever (they are most of these
tables' bytes: a ContextCollected envelope is about 130 kB). ``prune_outputs`` drops the outputs of inputs done
more than ``MODELGUARD_PROCESSED_OUTPUTS_KEEP_HOURS`` ago (two weeks by default, twice the topics' default
retention); the input stays marked done, so an input read again after that (an operator's replay, a republish of an
incident stuck that long) is neither handled again nor answered: ``outputs_of`` says ``Pruned``. A done claim's
``lease_until`` is the time the input was done.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
from dataclasses import dataclass
from functools import cache

from libs.process_liveness import pid_namespace_inode, process_ended
from libs.state.port import StateDatabase, StateSchema, StateTables

PROCESSED_INPUTS = StateSchema(
    file="processed.sqlite",
    tables=("processed", "attempts", "claims"),
    create=(
        "CREATE TABLE IF NOT EXISTS {processed} (event_id TEXT PRIMARY KEY, outputs TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {attempts} (input_id TEXT PRIMARY KEY, failed INTEGER NOT NULL)",
        "CREATE TABLE IF NOT EXISTS {claims} (event_id TEXT PRIMARY KEY, owner TEXT NOT NULL, "
        "lease_until DOUBLE PRECISION NOT NULL, done INTEGER NOT NULL)",
    ),
    # what a power loss can take: a mark (the input, if read again, is handled again and its outputs carry the same
    # event ids, which every consumer and the ledger drop as repeats), a claim (its holder went down with it), a
    # failed attempt's count (one more retry)
    replayable=True,
)

_CLAIM = (
    "INSERT INTO {claims} (event_id, owner, lease_until, done) VALUES (:event_id, :owner, {now} + :lease_s, 0) "
    "ON CONFLICT (event_id) DO UPDATE SET owner = excluded.owner, lease_until = excluded.lease_until "
    "WHERE {claims}.done = 0 AND ({claims}.owner = excluded.owner OR {claims}.lease_until < {now}) "
    "RETURNING owner"
)
_HOLDER = "SELECT owner, lease_until - {now}, done FROM {claims} WHERE event_id = :event_id"
_TAKE_OVER = (
    "UPDATE {claims} SET owner = :owner, lease_until = {now} + :lease_s "
    "WHERE event_id = :event_id AND owner = :gone AND done = 0"
)
_RENEW = "UPDATE {claims} SET lease_until = {now} + :lease_s WHERE event_id = :event_id AND owner = :owner AND done = 0"
_RELEASE = "UPDATE {claims} SET lease_until = 0 WHERE event_id = :event_id AND owner = :owner AND done = 0"
_RECORD_OUTPUTS = (
    "INSERT INTO {processed} (event_id, outputs) VALUES (:event_id, :outputs) ON CONFLICT (event_id) DO NOTHING"
)
_CLAIM_DONE = (
    "INSERT INTO {claims} (event_id, owner, lease_until, done) VALUES (:event_id, :owner, {now}, 1) "
    "ON CONFLICT (event_id) DO UPDATE SET done = 1, lease_until = {now}"
)
PRUNED_OUTPUTS = "null"
"""The outputs column of an input whose outputs were pruned (JSON null; a handled input's outputs are a list)."""
_PRUNE_OUTPUTS = (
    "UPDATE {processed} SET outputs = :pruned WHERE event_id IN (SELECT c.event_id FROM {claims} c "
    "JOIN {processed} p ON p.event_id = c.event_id WHERE c.done = 1 AND c.lease_until < {now} - :keep_s "
    "AND p.outputs <> :pruned LIMIT :batch)"
)
PRUNE_BATCH = 500
"""Inputs pruned per statement: each is a short write transaction, however much there is to prune."""
_COUNT_FAILURE = (
    "INSERT INTO {attempts} (input_id, failed) VALUES (:input_id, 1) "
    "ON CONFLICT (input_id) DO UPDATE SET failed = {attempts}.failed + 1 RETURNING failed"
)


@cache
def _pid_namespace() -> str:
    """This host and PID namespace: two processes with the same one see each other's process ids."""
    return f"{socket.gethostname()}:{pid_namespace_inode()}"


def replica_name(service: str) -> str:
    """This process as the owner of claims: service, host and PID namespace, process id, and a random part (a
    restarted process that got the same pid is another owner)."""
    return f"{service}@{_pid_namespace()}/{os.getpid()}/{secrets.token_hex(3)}"


def gone(owner: str) -> bool:
    """True when ``owner`` is a process of this host and PID namespace that no longer runs (killed, crashed): its
    claims need not wait out their lease. False for any other owner, whose lease is the only word."""
    try:
        _, where = owner.split("@", 1)
        namespace, pid, _ = where.rsplit("/", 2)
        number = int(pid)
    except ValueError:
        return False
    if namespace != _pid_namespace() or number <= 0:
        return False
    return process_ended(number)  # a zombie (killed, not yet reaped by its parent) is gone too


@dataclass(frozen=True)
class Pruned:
    """A handled input whose outputs were dropped after the retention (``prune_outputs``)."""


@dataclass(frozen=True)
class Held:
    """Another replica's live claim on an input (or, ``done``, an input finished since it was looked up)."""

    owner: str
    remaining_s: float
    done: bool = False


class ProcessedInputs:
    """Event ids of handled inputs and their output envelopes, the claims on inputs in hand, and failed attempts,
    in one service's state (shared by its replicas)."""

    def __init__(self, tables: StateTables) -> None:
        self._tables = tables

    @classmethod
    def of(cls, state: StateDatabase, service: str) -> ProcessedInputs:
        return cls(state.tables(service, PROCESSED_INPUTS))

    def outputs_of(self, event_id: str) -> list[bytes] | Pruned | None:
        """The output envelopes recorded for a handled input; None when the input was never handled; Pruned when
        it was handled so long ago that its outputs were dropped."""
        row = self._tables.run("SELECT outputs FROM {processed} WHERE event_id = :event_id", {"event_id": event_id})
        first = row.first()
        if first is None:
            return None
        if first[0] == PRUNED_OUTPUTS:
            return Pruned()
        return [envelope.encode() for envelope in json.loads(first[0])]

    def prune_outputs(self, keep_s: float, batch: int = PRUNE_BATCH) -> int:
        """Drop the outputs of inputs done more than ``keep_s`` seconds ago, ``batch`` inputs per transaction; how
        many inputs' outputs were dropped."""
        pruned = 0
        while True:
            count = self._tables.run(
                _PRUNE_OUTPUTS, {"keep_s": keep_s, "batch": batch, "pruned": PRUNED_OUTPUTS}
            ).rowcount
            pruned += count
            if count < batch:
                return pruned

    def claim(self, event_id: str, owner: str, lease_s: float) -> Held | None:
        """Claim an input for ``owner`` (again, if it holds it already) for ``lease_s``; None when it is claimed
        now. Otherwise who holds it and for how long yet, or ``done`` when it was finished meanwhile."""
        won = self._tables.run(_CLAIM, {"event_id": event_id, "owner": owner, "lease_s": lease_s})
        if won.first() is not None:
            return None
        holder = self._tables.run(_HOLDER, {"event_id": event_id}).first()
        if holder is None:  # the claim was taken and released between the two statements: say so, try again
            return Held("", 0.0)
        return Held(str(holder[0]), max(0.0, float(holder[1])), bool(holder[2]))

    def take_over(self, event_id: str, gone_owner: str, owner: str, lease_s: float) -> bool:
        """Take a claim from an owner known to be gone (``gone``) before its lease runs out; False when the claim
        changed hands or finished meanwhile."""
        params = {"event_id": event_id, "gone": gone_owner, "owner": owner, "lease_s": lease_s}
        return self._tables.run(_TAKE_OVER, params).rowcount == 1

    def renew(self, event_id: str, owner: str, lease_s: float) -> bool:
        """Extend ``owner``'s claim; False when it no longer holds it (its lease ran out and another took it)."""
        params = {"event_id": event_id, "owner": owner, "lease_s": lease_s}
        return self._tables.run(_RENEW, params).rowcount == 1

    def release(self, event_id: str, owner: str) -> None:
        """Give up a claim without finishing the input (a retry later, by any replica)."""
        self._tables.run(_RELEASE, {"event_id": event_id, "owner": owner})

    def mark(self, event_id: str, output_envelopes: list[bytes], owner: str = "") -> None:
        """Record the input as handled with its outputs (the first record wins) and end any claim on it."""
        outputs = json.dumps([envelope.decode() for envelope in output_envelopes])
        with self._tables.transaction() as tx:
            tx.run(_RECORD_OUTPUTS, {"event_id": event_id, "outputs": outputs})
            tx.run(_CLAIM_DONE, {"event_id": event_id, "owner": owner})

    def failed_attempt(self, input_id: str) -> int:
        """Count one more failed attempt at an input (kept across restarts); how many there have been."""
        row = self._tables.run(_COUNT_FAILURE, {"input_id": input_id}).first()
        assert row is not None  # RETURNING of an upsert always has its row
        return int(row[0])

    def close(self) -> None:
        self._tables.close()
