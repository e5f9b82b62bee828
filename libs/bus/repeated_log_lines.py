"""One line per change of state instead of a flood: while the broker is unreachable the Kafka client logs the
same connection error many times a second. ``CollapseRepeats`` lets the first of a run of warnings or errors
through and holds back the ones that repeat it (same logger, same text once digits are ignored) until
``quiet_s`` has passed without one, or ``remind_s`` since the last line shown; the next line shown says how
many were held back. Other records pass untouched."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable

DIGITS = re.compile(r"\d+")


class CollapseRepeats(logging.Filter):
    def __init__(
        self, quiet_s: float = 10.0, remind_s: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.quiet_s = quiet_s
        self.remind_s = remind_s
        self.clock = clock
        self._runs: dict[tuple[str, str], tuple[float, float, int]] = {}
        """per (logger, shape): when one was last seen, when one was last shown, how many were held back"""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        shape = (record.name, DIGITS.sub("#", record.getMessage()))
        now = self.clock()
        seen, shown, held = self._runs.get(shape, (float("-inf"), float("-inf"), 0))
        if now - seen < self.quiet_s and now - shown < self.remind_s:
            self._runs[shape] = (now, shown, held + 1)
            return False
        if held:
            record.msg = f"{record.getMessage()} ({held} more like it held back)"
            record.args = ()
        self._runs[shape] = (now, now, 0)
        return True


def collapse_repeated_lines(loggers: tuple[str, ...] = ("aiokafka", "faststream", "modelguard.bus")) -> None:
    """Install one filter on the root handlers so every named logger's repeats are collapsed."""
    repeats = CollapseRepeats()
    for handler in logging.getLogger().handlers:
        handler.addFilter(lambda record: not record.name.startswith(loggers) or repeats.filter(record))
