"""Upcasting, as eventsourcing does it: an event stored at an older major is read as its writer wrote it, then
brought forward one major at a time by pure functions over its JSON payload (``upcast_v1_v2`` and so on), so every
reader handles today's shape only and nothing stored is rewritten (the signed bytes stay the writer's).

One step per (event type, major it leaves); a step refuses, with a one-line reason, a document it cannot carry
forward without inventing what its writer did not say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


class UpcastRefused(ValueError):
    """An old payload that has no faithful form in the next major."""


def evaluation_reported_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """EvaluationReported 1 -> 2: the two figure maps become one optional claim.

    1.x said "the workspace claims nothing" with two empty maps, and "it claims figures" with two filled ones;
    one empty and one filled was accepted by the contract and failed later in the gate. 2.0 has ``claimed``:
    None, or both revisions' figures."""
    upcast = {k: v for k, v in payload.items() if k not in ("baseline_metrics", "candidate_metrics")}
    baseline, candidate = payload.get("baseline_metrics") or {}, payload.get("candidate_metrics") or {}
    if bool(baseline) != bool(candidate):
        empty = "baseline" if not baseline else "candidate"
        raise UpcastRefused(f"EvaluationReported 1.x claims figures for one revision only (no {empty} figures)")
    upcast["claimed"] = {"baseline": baseline, "candidate": candidate} if baseline else None
    return upcast


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("EvaluationReported", 1): evaluation_reported_v1_to_v2,
}
"""(event type, major it leaves) -> the step to the next major."""


def upcast_payload(event_type: str, from_major: int, to_major: int, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` (JSON) of ``event_type`` at ``from_major``, carried forward to ``to_major`` step by step."""
    for major in range(from_major, to_major):
        step = UPCASTERS.get((event_type, major))
        if step is None:
            raise UpcastRefused(f"{event_type} has no upcaster from major {major} to {major + 1}")
        payload = step(payload)
    return payload
