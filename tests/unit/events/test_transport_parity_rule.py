"""The rule the transport parity test compares by (tests/support/transport_parity.py): a clock reading and a digest
over one are compared by what they stand for; any other difference is a difference."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from contracts.events.evaluation import RegressionDetected
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from tests.support.sample_events import AT, Keys, gate, reported
from tests.support.transport_parity import compare, side

KEYS = Keys("reporter", "detector")


def detection(cause: SignedEvent, seconds_later: int, run_id: str | None = None, baseline: float = 0.8) -> SignedEvent:
    """A RegressionDetected signed ``seconds_later`` than AT, whose policy's name copies its cause's clock."""
    payload = cause.event.payload
    when = AT + timedelta(seconds=seconds_later)
    detected = RegressionDetected(
        run_id=run_id or payload.run_id,
        workspace=payload.workspace,
        policy={"name": cause.event.meta.occurred_at.isoformat(), "artifact": payload.workspace.data},
        gate=gate(baseline=baseline),
    )
    event = next_event(detected, producer="detector", producer_version="test", occurred_at=when, causes=[cause])
    return seal(event, KEYS["detector"])


def later(signed: SignedEvent, seconds: int) -> SignedEvent:
    """The same event, stamped ``seconds`` later by its producer's clock."""
    meta = signed.event.meta.model_copy(
        update={"occurred_at": signed.event.meta.occurred_at + timedelta(seconds=seconds)}
    )
    return seal(signed.event.model_copy(update={"meta": meta}), KEYS[signed.event.meta.producer])


def test_events_that_differ_only_in_clock_readings_and_envelope_digests_are_equal_once_normalised(
    tmp_path: Path,
) -> None:
    first = reported(KEYS, run_id="rule-1")
    moved = later(first, 60)
    mine = side([first, detection(first, 5)], tmp_path / "a", tmp_path / "a")
    theirs = side([moved, detection(moved, 90)], tmp_path / "b", tmp_path / "b")

    rows = compare(mine, theirs)

    assert [r.normalised_equal for r in rows] == [True, True]
    assert [r.payload_equal for r in rows] == [True, False]
    assert rows[1].normalised_paths == ("policy.name",)


def test_any_other_difference_is_a_difference(tmp_path: Path) -> None:
    first = reported(KEYS, run_id="rule-2")
    mine = side([first, detection(first, 5)], tmp_path / "a", tmp_path / "a")
    theirs = side([first, detection(first, 5, baseline=0.81)], tmp_path / "b", tmp_path / "b")

    rows = compare(mine, theirs)

    assert [r.normalised_equal for r in rows] == [True, False]
    assert "gate.baseline" in rows[1].normalised_paths


def test_a_clock_reading_of_another_event_is_not_taken_for_this_ones(tmp_path: Path) -> None:
    """The policy's name copies the cause's clock: on the other side it copies the detection's own instead."""
    first = reported(KEYS, run_id="rule-3")
    ours = detection(first, 5)
    payload = ours.event.payload.model_copy(
        update={
            "policy": ours.event.payload.policy.model_copy(update={"name": (AT + timedelta(seconds=5)).isoformat()})
        }
    )
    event = next_event(
        payload, producer="detector", producer_version="test", occurred_at=AT + timedelta(seconds=5), causes=[first]
    )
    mine = side([first, ours], tmp_path / "a", tmp_path / "a")
    theirs = side([first, seal(event, KEYS["detector"])], tmp_path / "b", tmp_path / "b")

    assert [r.normalised_equal for r in compare(mine, theirs)] == [True, False]
