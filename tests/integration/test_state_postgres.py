"""The services' small state on PostgreSQL (MODELGUARD_STATE_URL): the same rules as on SQLite files, shared by
every replica, and a claim won once when processes race for it."""

from __future__ import annotations

import base64
import json
import time
from collections import Counter
from collections.abc import Iterator

import psycopg
import pytest

from libs.bus.dead_letters import dead_letter_of
from libs.bus.headers import dead_letter_headers
from libs.bus.processed_inputs import ProcessedInputs, Pruned
from libs.policy.model_policies.pins import PolicyPins
from libs.policy.model_policies.submission import SubmittedPolicy
from libs.state.postgres_state import PostgresState
from services.detector.dead_letter_log import DeadLetterLog
from services.publisher.notification_log import NotificationLog
from tests.support.postgres import fresh_schema, libpq_url, postgres_server
from tests.support.state_claims import race_for_claims

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture
def url(server: str) -> Iterator[str]:
    with fresh_schema(server) as schema_url:
        yield schema_url


def test_handled_inputs_claims_and_attempts_hold_on_postgres(url: str) -> None:
    first = ProcessedInputs.of(PostgresState(url), "diagnoser")
    second = ProcessedInputs.of(PostgresState(url), "diagnoser")  # another replica, the same rows
    assert first.claim("e1", "replica-a", lease_s=60) is None
    held = second.claim("e1", "replica-b", lease_s=60)
    assert held is not None and held.owner == "replica-a" and 50 < held.remaining_s <= 60
    first.mark("e1", [b'{"payload":"x"}'], owner="replica-a")
    done = second.claim("e1", "replica-b", lease_s=60)
    assert done is not None and done.done
    assert second.outputs_of("e1") == [b'{"payload":"x"}']

    assert first.claim("e2", "replica-a", lease_s=0.3) is None
    time.sleep(0.5)
    assert second.claim("e2", "replica-b", lease_s=60) is None, "a lease that ran out is taken over"
    assert not first.renew("e2", "replica-a", lease_s=60)

    assert [first.failed_attempt("x"), second.failed_attempt("x")] == [1, 2]
    with psycopg.connect(libpq_url(url)) as connection:
        tables = {
            row[0] for row in connection.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'state_%'")
        }
    assert {"state_diagnoser_processed", "state_diagnoser_claims", "state_diagnoser_attempts"} <= tables


def test_outputs_done_longer_ago_than_kept_are_pruned_on_postgres(url: str) -> None:
    store = ProcessedInputs.of(PostgresState(url), "diagnoser")
    assert store.claim("old", "replica-a", lease_s=10_000) is None
    store.mark("old", [b"out"], owner="replica-a")
    store.mark("new", [b"kept"], owner="replica-a")
    with psycopg.connect(libpq_url(url)) as connection:
        connection.execute("UPDATE state_diagnoser_claims SET lease_until = lease_until - 1000 WHERE event_id = 'old'")
    assert store.prune_outputs(keep_s=500, batch=1) == 1
    assert store.outputs_of("old") == Pruned()
    assert store.outputs_of("new") == [b"kept"]


def test_processes_racing_for_the_same_inputs_win_each_once_on_postgres(url: str) -> None:
    event_ids = [f"race-{i}" for i in range(60)]
    won = race_for_claims(url, event_ids, workers=3)
    assert Counter(event_id for event_id, _ in won) == Counter(event_ids), "every input claimed exactly once"


def test_dead_letters_pins_and_notifications_are_shared_on_postgres(url: str) -> None:
    one, other = PostgresState(url), PostgresState(url)
    letters = DeadLetterLog.of(one, "detector")
    event = base64.b64encode(json.dumps({"meta": {}, "payload": {"run_id": "ci-1"}}).encode()).decode()
    envelope = json.dumps({"payloadType": "x", "payload": event}).encode()
    for offset, reason in enumerate(("handler-error", "bad-evaluation", "inputs-unavailable")):
        headers = dead_letter_headers(reason, "detail", "diagnoser", f"topic/0@{offset}")
        letter = dead_letter_of(b"inc-1", envelope, [(k, v.encode()) for k, v in headers.items()])
        assert letters.record(f"dlq/0@{offset}", letter)
        assert not DeadLetterLog.of(other, "detector").record(f"dlq/0@{offset}", letter), "kept once by its place"
    kept = DeadLetterLog.of(other, "detector").of_run("inc-1", "ci-1")
    assert [r.reason for r in kept] == ["handler-error", "bad-evaluation", "inputs-unavailable"], "in the order kept"

    submitted = SubmittedPolicy("urn:li:mlModel:x", b"name: x\n\x00binary-safe", b"", None)  # type: ignore[arg-type]
    assert PolicyPins.of(one).pin(submitted) is True
    assert PolicyPins.of(other).pin(submitted) is False, "a second replica finds the same pin"
    pin = PolicyPins.of(other).pinned("urn:li:mlModel:x")
    assert pin is not None and pin.document == b"name: x\n\x00binary-safe"

    sent = NotificationLog.of(one)
    assert not sent.was_sent("inc-1", "open", "slack", False)
    sent.record("inc-1", "open", "slack", False, "sha256:abc")
    assert NotificationLog.of(other).was_sent("inc-1", "open", "slack", False)
    assert not NotificationLog.of(other).was_sent("inc-1", "open", "slack", True), "a dry run is apart"
