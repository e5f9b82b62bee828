"""What a checkpoint listed against what the database holds now, one line per difference, each naming its incident.

A v2 checkpoint lists every event of its range as (position, incident id, sequence, hash). When events are
later deleted, moved or rewritten, the signed listing still says which incident each position belonged to.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Entry = tuple[int, str, int, str]
"""(position, incident_id, sequence, hash) of one event."""


@dataclass(frozen=True)
class RangeDifference:
    position: int
    incident_id: str
    what: str


def diff_range(signed: Sequence[Entry], stored: Sequence[Entry], source: str) -> list[RangeDifference]:
    """`source` names the listing ("checkpoint 12", "external head 12") in each line."""
    listed = {e[0]: e for e in signed}
    held = {e[0]: e for e in stored}
    found: list[RangeDifference] = []
    for position in sorted(set(listed) | set(held)):
        was, now = listed.get(position), held.get(position)
        if now is None and was is not None:
            found.append(
                RangeDifference(
                    position, was[1], f"event {was[2]} at position {position} is missing ({source} lists it)"
                )
            )
        elif was is None and now is not None:
            found.append(
                RangeDifference(
                    position, now[1], f"event {now[2]} at position {position} is not in {source}: added later"
                )
            )
        elif was is not None and now is not None and (was[1], was[2]) != (now[1], now[2]):
            found.append(
                RangeDifference(
                    position,
                    was[1],
                    f"position {position} held its event {was[2]} ({source}); it now holds incident {now[1]} event "
                    f"{now[2]}: events were moved",
                )
            )
        elif was is not None and now is not None and was[3] != now[3]:
            found.append(
                RangeDifference(
                    position,
                    was[1],
                    f"event {was[2]} at position {position} has another hash than {source} signed: it was changed",
                )
            )
    return found
