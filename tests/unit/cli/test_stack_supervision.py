"""The supervisor's restart policy: exponential backoff with jitter, reset once a service has stayed up."""

from __future__ import annotations

import pytest

from modelguard.supervision import RestartPolicy, ServiceRecord

POLICY = RestartPolicy(base_s=1.0, cap_s=30.0, stable_s=30.0, jitter=0.2)


def test_each_exit_in_a_row_waits_twice_as_long_up_to_the_cap() -> None:
    assert [POLICY.delay(n, draw=0.0) for n in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_jitter_shortens_a_delay_by_at_most_its_fraction() -> None:
    assert POLICY.delay(3, draw=0.0) == 4.0
    assert POLICY.delay(3, draw=0.999) == pytest.approx(4.0 * (1 - 0.2 * 0.999))
    assert min(POLICY.delay(3, draw / 10) for draw in range(10)) > 4.0 * 0.8


def test_a_service_that_keeps_failing_backs_off_and_one_that_stayed_up_starts_over() -> None:
    record = ServiceRecord("diagnoser")
    record.started(101, now=0.0, restart=False)
    assert record.exited(1, now=0.5, policy=POLICY, draw=0.0) == 1.5
    record.started(102, now=1.5, restart=True)
    assert record.exited(1, now=2.0, policy=POLICY, draw=0.0) == 4.0  # second exit in a row: 2 s
    record.started(103, now=4.0, restart=True)
    assert record.exited(-9, now=100.0, policy=POLICY, draw=0.0) == 101.0  # up 96 s: healthy again, 1 s
    assert (record.restarts, record.exits, record.pid) == (2, [1, 1, -9], None)


def test_only_the_last_ten_exit_codes_are_kept() -> None:
    record = ServiceRecord("context")
    for code in range(12):
        record.started(code + 1, now=float(code), restart=code > 0)
        record.exited(code, now=code + 0.1, policy=POLICY, draw=0.0)
    assert record.exits == list(range(2, 12))
