"""Waiting for the condition a test asserts, instead of sleeping and hoping."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


async def until(condition: Callable[[], bool], timeout_s: float, every_s: float = 0.2) -> bool:
    """Whether ``condition`` held within ``timeout_s``, looked at every ``every_s`` on the running loop."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(every_s)
    return condition()


def wait_until(condition: Callable[[], bool], timeout_s: float, every_s: float = 0.02) -> bool:
    """Whether ``condition`` held within ``timeout_s``, looked at every ``every_s`` (outside an event loop)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every_s)
    return condition()
