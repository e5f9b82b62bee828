"""Incidents reported one after another, each once the one before it has published: ModelGuard's own time per
incident with nothing else in flight.

The ten-at-once wave is the throughput figure, but there each incident's steps share the two cores with nine other
incidents' commands, so its "ModelGuard per incident" moves by 70-100 ms from run to run on the same code. Here an
incident has the machine to itself (the stack idle but for it), so the same figure is the cost of ModelGuard's own
steps. Each report is signed just before it is published: an incident's time starts when it was reported, not when
the bench made its report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from libs.events.codec import SignedEvent
from modelguard.percentiles import percentile
from modelguard.pipeline_overhead import IncidentTime

Unsigned = TypeVar("Unsigned")


def report_one_at_a_time(
    unsigned: Sequence[Unsigned],
    sign: Callable[[Unsigned], SignedEvent],
    publish: Callable[[SignedEvent], None],
    published: Callable[[str], list[SignedEvent] | None],
) -> dict[str, list[SignedEvent]]:
    """Each report signed, published, and waited for (``published``: the incident's events once it has published,
    None when it did not in time) before the next is signed; the incidents that published, with their events. The
    first that does not publish ends the pass: the next would no longer have the machine to itself."""
    done: dict[str, list[SignedEvent]] = {}
    for evaluation in unsigned:
        report = sign(evaluation)
        publish(report)
        incident = report.event.meta.incident_id
        events = published(incident)
        if events is None:
            break
        done[incident] = events
    return done


def one_at_a_time_lines(times: list[IncidentTime], asked: int, phases: Sequence[str]) -> list[str]:
    """ModelGuard's own time per incident, and where it went (``phases``, in the pipeline's order), for the incidents
    of a one-at-a-time pass."""
    if not times:
        return [f"\none at a time: none of {asked} incidents published"]
    own = [1000 * t.overhead for t in times]
    return [
        f"\none at a time ({len(times)} of {asked} incidents, each alone on the stack): ModelGuard p50 "
        f"{percentile(own, 0.5):.0f} ms (p95 {percentile(own, 0.95):.0f}), beside commands p50 "
        f"{percentile([t.commands for t in times], 0.5):.2f} s",
        f"  the bus delivering the inputs p50 {percentile([1000 * t.waited for t in times], 0.5):.0f} ms, handling "
        f"them outside their commands p50 {percentile([1000 * t.handling for t in times], 0.5):.0f} ms; by phase, "
        "p50 ms: "
        + "  ".join(
            f"{phase} {percentile([1000 * t.by_phase.get(phase, 0.0) for t in times], 0.5):.0f}" for phase in phases
        ),
    ]
