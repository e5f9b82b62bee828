"""How many MCL records ended each way: applied, skipped on purpose (per reason), dead-lettered (per reason).

Kept in the mirror's ``meta`` table under :data:`COUNTS_META_KEY`, written in the same transaction as the
mirror's state and offsets, so the counts are exact across restarts (a record is counted once, when its
offset is committed).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

COUNTS_META_KEY = "mcl_intake_counts"

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

    @classmethod
    def from_json(cls, text: str | None) -> IntakeCounts:
        """The counts a mirror stored; empty counts when none were stored (or they do not read)."""
        if not text:
            return cls()
        try:
            stored = json.loads(text)
            return cls(int(stored["applied"]), Counter(stored["skipped"]), Counter(stored["dead_lettered"]))
        except (ValueError, KeyError, TypeError):
            return cls()
