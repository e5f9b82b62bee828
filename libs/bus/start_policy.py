"""Where a consumer of DataHub's MetadataChangeLog starts when nothing says where to resume.

DataHub's MCL topics keep weeks of history. A consumer that starts at the earliest offset the first time it
runs would read every old schema change as new upstream risk: a flood of incidents about the past. So when a
partition has neither an offset stored beside the intake's state nor a committed group offset, the start
policy decides:

- ``latest`` (the default): from the end, only what DataHub emits from now on;
- a duration (``90m``, ``24h``, ``7d``, ``3600s``): the first record no older than that, by record timestamp;
- ``earliest``: everything retained (the embedded stack's own, fresh broker holds no history).

The chosen position is committed for the group at once, so a restart before the first record arrives resumes
there instead of choosing again (and skipping what arrived in between).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DURATION = re.compile(r"^(\d+(?:\.\d+)?)([smhd])$")


class StartPolicyError(ValueError):
    pass


@dataclass(frozen=True)
class StartPolicy:
    kind: Literal["earliest", "latest", "max_age"]
    max_age_s: float | None = None

    def __str__(self) -> str:
        return f"records no older than {self.max_age_s:g} s" if self.kind == "max_age" else self.kind


def parse_start_policy(raw: str, origin: str = "MODELGUARD_MCL_START") -> StartPolicy:
    text = raw.strip().lower()
    if text in ("earliest", "latest"):
        return StartPolicy(text)  # type: ignore[arg-type]
    match = DURATION.match(text)
    if match is None or float(match.group(1)) <= 0:
        raise StartPolicyError(
            f"{origin} must be latest, earliest or a positive duration such as 90m, 24h or 7d; got {raw!r}"
        )
    return StartPolicy("max_age", float(match.group(1)) * UNITS_S[match.group(2)])


LATEST = StartPolicy("latest")
