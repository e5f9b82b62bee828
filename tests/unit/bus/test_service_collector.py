"""The collector set for a service process: what is alive is frozen, garbage is not, and the young generation is
collected less often."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from libs.bus.service_collector import MIDDLE_THRESHOLD, YOUNG_THRESHOLD, settle_collector


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


@pytest.fixture
def restored_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_what_is_alive_is_frozen_and_garbage_is_collected_first(restored_collector: None) -> None:
    kept = [_Node() for _ in range(100)]
    first, second = _Node(), _Node()
    first.other, second.other = second, first  # a cycle nothing refers to: garbage only the collector frees
    gone = weakref.ref(first)
    del first, second
    assert gone() is not None

    settle_collector()

    assert gone() is None
    assert gc.get_freeze_count() >= len(kept)
    assert not any(node in gc.get_objects() for node in kept[:3])  # frozen objects are out of every generation


def test_the_young_generation_is_collected_less_often_and_the_oldest_as_before(restored_collector: None) -> None:
    oldest = gc.get_threshold()[2]
    settle_collector()
    assert gc.get_threshold() == (YOUNG_THRESHOLD, MIDDLE_THRESHOLD, oldest)
    assert YOUNG_THRESHOLD > 700
