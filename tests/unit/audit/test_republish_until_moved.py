"""`republish` watches each re-sent incident move on and re-sends, with a doubling interval, those that do not,
until a deadline: one command after a broker loss, not several passes by hand."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from libs.ledger import LedgerStore
from libs.signing.keys import KeyRegistry, RegisteredKey, generate_key
from modelguard.audit_republish import Resend, SendFailed, republish_until_moved
from services.ledger.handler import LedgerSink
from tests.support.sample_events import detected, reported


class Keys(dict):  # type: ignore[type-arg]
    def __missing__(self, owner: str):  # type: ignore[no-untyped-def]
        self[owner] = generate_key(owner)
        return self[owner]


@dataclass
class Clock:
    now: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def ledger_with_one_unfinished(tmp_path: Path) -> tuple[LedgerStore, KeyRegistry, Keys, LedgerSink]:
    keys = Keys()
    first = reported(keys)  # type: ignore[arg-type]
    store = LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}")
    store.create_schema()
    sink = LedgerSink(store, checkpoint=lambda: None)
    sink(first)
    registry = KeyRegistry(
        [RegisteredKey(keys[o].keyid, o, keys[o].private_key.public_key()) for o in ("reporter", "detector")]
    )
    return store, registry, keys, sink


def test_an_incident_that_moves_after_the_second_send_is_reported_moved(tmp_path: Path) -> None:
    store, registry, keys, sink = ledger_with_one_unfinished(tmp_path)
    clock, sent = Clock(), []

    def send(resends: list[Resend]) -> None:
        sent.append([r.signed.event.meta.event_type for r in resends])
        if len(sent) == 2:  # the first send was lost; the second one is handled
            sink(detected(keys, resends[0].signed))  # type: ignore[arg-type]

    result = republish_until_moved(
        send, store, registry, None, wait_s=60, resend_every_s=10, clock=clock, sleep=clock.sleep
    )
    assert sent == [["EvaluationReported"], ["EvaluationReported"]]
    assert len(result.moved) == 1 and result.waiting == {}
    assert 10 <= clock.now < 11


def test_one_that_never_moves_is_re_sent_with_doubling_intervals_until_the_deadline(tmp_path: Path) -> None:
    store, registry, _, _ = ledger_with_one_unfinished(tmp_path)
    clock, sent = Clock(), []
    result = republish_until_moved(
        lambda resends: sent.append(clock.now),
        store,
        registry,
        None,
        wait_s=100,
        resend_every_s=10,
        clock=clock,
        sleep=clock.sleep,
    )
    assert sent == [0.0, 10.0, 30.0, 70.0]
    assert result.moved == [] and list(result.waiting.values()) == ["EvaluationReported"]


def test_wait_zero_sends_once_and_nothing_unfinished_sends_nothing(tmp_path: Path) -> None:
    store, registry, _, _ = ledger_with_one_unfinished(tmp_path)
    sent: list[int] = []
    once = republish_until_moved(lambda r: sent.append(len(r)), store, registry, None, wait_s=0)
    assert sent == [1] and len(once.rounds) == 1
    assert republish_until_moved(lambda r: sent.append(len(r)), store, registry, "inc-none", wait_s=30).rounds == []


def test_a_send_the_broker_refuses_is_retried_soon_instead_of_ending_the_republish(tmp_path: Path) -> None:
    """A broker that has just restarted can refuse a produce (Tansu answered one with error -1 in CI): the
    republish keeps going, retries within seconds, and reports the refusal."""
    store, registry, keys, sink = ledger_with_one_unfinished(tmp_path)
    clock, attempts = Clock(), []

    def send(resends: list[Resend]) -> None:
        attempts.append(clock.now)
        if len(attempts) == 1:
            raise SendFailed("UnknownError: [Error -1] UnknownError")
        sink(detected(keys, resends[0].signed))  # type: ignore[arg-type]

    result = republish_until_moved(
        send, store, registry, None, wait_s=60, resend_every_s=10, clock=clock, sleep=clock.sleep
    )
    assert len(attempts) == 2 and attempts[1] - attempts[0] <= 2.0
    assert result.failures == ["UnknownError: [Error -1] UnknownError"]
    assert len(result.rounds) == 1 and len(result.moved) == 1 and result.waiting == {}


def test_a_broker_that_refuses_every_send_leaves_the_incidents_waiting_with_the_reason(tmp_path: Path) -> None:
    store, registry, _, _ = ledger_with_one_unfinished(tmp_path)
    clock = Clock()

    def refuse(resends: list[Resend]) -> None:
        raise SendFailed("KafkaConnectionError: Unable to bootstrap")

    result = republish_until_moved(
        refuse, store, registry, None, wait_s=30, resend_every_s=10, clock=clock, sleep=clock.sleep
    )
    assert result.rounds == [] and list(result.waiting.values()) == ["EvaluationReported"]
    assert len(result.failures) >= 3 and set(result.failures) == {"KafkaConnectionError: Unable to bootstrap"}
    assert clock.now >= 30
    once = republish_until_moved(refuse, store, registry, None, wait_s=0, clock=clock, sleep=clock.sleep)
    assert once.rounds == [] and len(once.failures) == 1 and len(once.waiting) == 1
