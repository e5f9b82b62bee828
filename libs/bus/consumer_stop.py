"""Stopping a FastStream Kafka subscriber when its broker is gone.

``subscriber.stop()`` waits for the handler in flight (up to the broker's ``graceful_timeout``) and then for
aiokafka's ``consumer.stop()``, which first lets the group coordinator's routine finish. With no broker that
routine never finishes: it loops looking for a coordinator and does not look at the close request (aiokafka
0.14, ``GroupCoordinator.__coordination_routine`` → ``ensure_coordinator_known``). Meanwhile the fetcher and the
metadata loop go on reconnecting every 100 ms. And when the coordinator does finish, the fetcher's close
awaits the fetch tasks it has just cancelled and lets their ``CancelledError`` out, which would end the
caller instead. So after a grace period, or after that stray cancellation, the rest of the close is done here, in
aiokafka's own order minus leaving the group (there is nobody to tell): the heartbeat and commit-refresh
tasks, the fetcher, the client. These are aiokafka's private parts; `tests/integration/test_broker_unreachable.py`
fails if a new aiokafka changes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

log = logging.getLogger("modelguard.bus")


async def stop_subscriber(subscriber: Any, grace_s: float) -> bool:
    """Stop ``subscriber`` and close its consumer; True when the ordinary stop finished within ``grace_s``."""
    consumer = getattr(subscriber, "consumer", None)
    try:
        await asyncio.wait_for(subscriber.stop(), grace_s)
        return True
    except TimeoutError:
        pass
    except asyncio.CancelledError:
        if _being_cancelled():
            raise
        # aiokafka's fetcher awaits the fetch tasks it has just cancelled and lets their CancelledError out
    if consumer is not None:
        await _close_without_group(consumer, grace_s)
    subscriber.consumer = None
    return False


async def _close_without_group(consumer: Any, grace_s: float) -> None:
    coordinator = getattr(consumer, "_coordinator", None)
    steps = [
        getattr(coordinator, "_stop_heartbeat_task", None),
        getattr(coordinator, "_stop_commit_offsets_refresh_task", None),
        getattr(getattr(consumer, "_fetcher", None), "close", None),
        getattr(getattr(consumer, "_client", None), "close", None),
    ]
    for step in steps:
        if step is None:
            continue
        try:
            await asyncio.wait_for(step(), grace_s)
        except asyncio.CancelledError:
            if _being_cancelled():
                raise
        except Exception as exc:  # closing what is already broken: note it, go on with the next part
            log.debug("closing a consumer whose broker is gone: %s: %s", getattr(step, "__qualname__", step), exc)
    with contextlib.suppress(AttributeError):
        consumer._closed = True


def _being_cancelled() -> bool:
    """Whether a CancelledError is for us (re-raise it) or leaked from a task aiokafka cancelled (swallow it)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
