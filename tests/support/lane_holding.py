"""Stand-ins for commands in tests of an incident's lanes (``libs/workspace/command_lanes.py``): each is begun (as a
command is prepared), then takes a lane as a command does. The test decides which of them hold their lane until
enough have begun, and reads the most lanes held at once."""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator
from contextlib import contextmanager

from libs.workspace.command_lanes import in_a_lane


class LaneHolding:
    def __init__(self, begun_before_release: int = 3) -> None:
        self.lock = threading.Lock()
        self.begun: list[Hashable] = []
        self.enough_begun = threading.Event()
        self.begun_before_release = begun_before_release
        self.held = self.most_held = self.taken = 0

    def begin(self, what: Hashable) -> None:
        with self.lock:
            self.begun.append(what)
            if len(self.begun) == self.begun_before_release:
                self.enough_begun.set()

    @contextmanager
    def lane(self) -> Iterator[int]:
        """Hold a lane for the block; gives the order it was taken in (1 for the first)."""
        with in_a_lane():
            with self.lock:
                self.held += 1
                self.taken += 1
                order = self.taken
                self.most_held = max(self.most_held, self.held)
            try:
                yield order
            finally:
                with self.lock:
                    self.held -= 1

    def hold_until_enough_begun(self, what: str) -> None:
        assert self.enough_begun.wait(timeout=10), f"the last {what} was begun only once a lane was given back"
