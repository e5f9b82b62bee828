"""How many MCL records ended each way: applied, skipped on purpose (per reason), dead-lettered (per reason).

Kept in the mirror store's counters (``applied``, ``skipped:<reason>``, ``dead_lettered:<reason>``), incremented
in the same transaction as the mirror's state and the offsets of the records counted, so the counts are exact
across restarts and with several replicas sharing the store (a record is counted once, when its offset is
committed).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

APPLIED = "applied"

Outcome = Literal["applied", "skipped", "dead_lettered"]


@dataclass
class IntakeCounts:
    applied: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    dead_lettered: Counter[str] = field(default_factory=Counter)

    def add(self, outcome: Outcome, reason: str = "") -> None:
        if outcome == "applied":
            self.applied += 1
        elif outcome == "skipped":
            self.skipped[reason] += 1
        else:
            self.dead_lettered[reason] += 1

    @property
    def total(self) -> int:
        return self.applied + sum(self.skipped.values()) + sum(self.dead_lettered.values())

    def to_json(self) -> str:
        return json.dumps(
            {"applied": self.applied, "skipped": dict(self.skipped), "dead_lettered": dict(self.dead_lettered)},
            sort_keys=True,
        )

    def as_counters(self) -> dict[str, int]:
        """The counts as store counters (increments, when these are the counts of one batch)."""
        counters = {APPLIED: self.applied} if self.applied else {}
        counters.update({f"skipped:{reason}": n for reason, n in self.skipped.items()})
        counters.update({f"dead_lettered:{reason}": n for reason, n in self.dead_lettered.items()})
        return counters

    def merged(self, other: IntakeCounts) -> IntakeCounts:
        return IntakeCounts(
            self.applied + other.applied, self.skipped + other.skipped, self.dead_lettered + other.dead_lettered
        )

    @classmethod
    def from_counters(cls, counters: Mapping[str, int]) -> IntakeCounts:
        """The counts a store's counters hold (other counters are ignored)."""
        counts = cls()
        for name, value in counters.items():
            if name == APPLIED:
                counts.applied = value
            elif name.startswith("skipped:"):
                counts.skipped[name.removeprefix("skipped:")] = value
            elif name.startswith("dead_lettered:"):
                counts.dead_lettered[name.removeprefix("dead_lettered:")] = value
        return counts

    @classmethod
    def from_json(cls, text: str | None) -> IntakeCounts:
        """The counts a mirror stored; empty counts when none were stored (or they do not read)."""
        if not text:
            return cls()
        try:
            stored = json.loads(text)
            return cls(int(stored["applied"]), _per_reason(stored["skipped"]), _per_reason(stored["dead_lettered"]))
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError):  # int() of 1e999; nesting past json
            return cls()


def _per_reason(stored: object) -> Counter[str]:
    """A stored mapping of reason to count; TypeError for anything else (a count that is text, a float, a list)."""
    if not isinstance(stored, dict) or not all(type(n) is int for n in stored.values()):
        raise TypeError("not counts per reason")
    return Counter(stored)
