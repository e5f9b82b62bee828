"""A run of the same warning is shown once, then again with a count after a quiet spell or a reminder
interval; other lines pass."""

from __future__ import annotations

import logging

from libs.bus.repeated_log_lines import CollapseRepeats


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def record(message: str, level: int = logging.ERROR, name: str = "aiokafka") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, (), None)


def test_a_flood_of_one_error_is_shown_once_then_with_a_count() -> None:
    clock = Clock()
    repeats = CollapseRepeats(quiet_s=10.0, remind_s=60.0, clock=clock)
    shown = []
    for tick in range(600):  # sixty a second for ten seconds, the port changing
        clock.now = tick / 60
        line = record(f'Unable connect to "127.0.0.1:{9000 + tick % 3}": [Errno 111] Connect call failed')
        if repeats.filter(line):
            shown.append(line.getMessage())
    assert len(shown) == 1
    clock.now = 30.0  # quiet for 20 s: the next one is shown, with the count of those held back
    again = record('Unable connect to "127.0.0.1:9001": [Errno 111] Connect call failed')
    assert repeats.filter(again) and again.getMessage().endswith("(599 more like it held back)")


def test_a_flood_that_never_stops_is_reminded_every_interval() -> None:
    clock = Clock()
    repeats = CollapseRepeats(quiet_s=10.0, remind_s=60.0, clock=clock)
    shown = 0
    for tick in range(0, 1800):  # one a second for thirty minutes
        clock.now = float(tick)
        shown += repeats.filter(record("broker away"))
    assert shown == 30


def test_info_lines_and_different_messages_pass() -> None:
    repeats = CollapseRepeats(clock=Clock())
    assert all(repeats.filter(record("handled an input", logging.INFO)) for _ in range(5))
    assert repeats.filter(record("first problem")) and repeats.filter(record("another problem"))
