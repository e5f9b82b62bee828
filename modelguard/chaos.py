"""Chaos over the embedded stack: SIGKILL random services while synthetic incidents run, with the stack's
supervisor starting them again, then count what came through.

Each kill picks a service at random (seeded), waits until the supervisor has it running and ready again
(that wait is the kill's recovery time), then pauses a random interval before the next one. When every
incident is published, or the deadline passes, the figures are: completed, lost (never published), duplicated
(an incident with more than one distinct ``Published`` event, or more than one GitHub comment file), the ledger's
verification, and the recovery times. ``modelguard bench chaos`` prints them; the e2e test asserts them.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from libs.bus.producer import publish_signed
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, verify_all
from libs.settings import Settings
from libs.signing.keys import KeyRegistry
from modelguard.incident_log import incident_events
from modelguard.stack import SERVICES, StackState, pid_alive, stack_status


@dataclass
class ChaosFigures:
    incidents: int
    completed: int = 0
    lost: list[str] = field(default_factory=list)
    duplicated: list[str] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    recovery_s: list[float] = field(default_factory=list)
    ledger_verified: bool = False
    wall_s: float = 0.0

    def lines(self) -> list[str]:
        recovery = sorted(self.recovery_s)
        worst = f"{recovery[-1]:.1f}s" if recovery else "-"
        median = f"{recovery[len(recovery) // 2]:.1f}s" if recovery else "-"
        killed = ", ".join(f"{name} x{self.kills.count(name)}" for name in sorted(set(self.kills))) or "none"
        return [
            f"chaos: {len(self.kills)} SIGKILLs during {self.incidents} incidents ({killed}), supervisor on",
            f"  completed {self.completed}/{self.incidents}, lost {len(self.lost)}, duplicated {len(self.duplicated)}"
            f", ledger {'verifies' if self.ledger_verified else 'FAILS verification'}, wall {self.wall_s:.1f}s",
            f"  seconds to recover (killed → running and ready again): median {median}, worst {worst}",
        ]


def wait_recovered(settings: Settings, name: str, victim: int, timeout_s: float) -> bool:
    """Until the supervisor runs the service under a new pid and it has said it is ready."""
    deadline = time.monotonic() + timeout_s
    ready = settings.run_dir / f"{name}.ready"
    while time.monotonic() < deadline:
        status = stack_status(settings).get(name)
        if status is not None and status.running and status.pid != victim and ready.exists():
            try:
                if int(ready.read_text().strip() or 0) == status.pid:
                    return True
            except ValueError:
                pass
        time.sleep(0.1)
    return False


def published(store: LedgerStore, registry: KeyRegistry, incident: str) -> list[SignedEvent]:
    return [e for e in incident_events(store, incident, registry) if e.event.meta.event_type == "Published"]


def run_chaos(
    settings: Settings,
    state: StackState,
    reports: list[SignedEvent],
    kills: int,
    seed: int = 7,
    pause_s: tuple[float, float] = (2.0, 6.0),
    timeout_s: float = 1800.0,
    services: tuple[str, ...] = SERVICES,
) -> ChaosFigures:
    chooser = random.Random(seed)
    registry = KeyRegistry.load(settings.key_registry_path)
    store = LedgerStore(settings.ledger_url)
    incidents = [report.event.meta.incident_id for report in reports]
    figures = ChaosFigures(len(incidents))
    started = time.monotonic()
    deadline = started + timeout_s
    asyncio.run(publish_signed(state.bootstrap, reports))
    done: set[str] = set()

    def check() -> None:
        for incident in incidents:
            if incident not in done and published(store, registry, incident):
                done.add(incident)

    while len(figures.kills) < kills and len(done) < len(incidents) and time.monotonic() < deadline:
        time.sleep(chooser.uniform(*pause_s))
        name = chooser.choice(services)
        victim = stack_status(settings)[name].pid
        if not pid_alive(victim):
            continue
        os.killpg(victim, signal.SIGKILL)  # type: ignore[arg-type]
        killed_at = time.monotonic()
        figures.kills.append(name)
        if wait_recovered(settings, name, victim, timeout_s=max(1.0, deadline - time.monotonic())):  # type: ignore[arg-type]
            figures.recovery_s.append(time.monotonic() - killed_at)
        check()
    while len(done) < len(incidents) and time.monotonic() < deadline:
        check()
        time.sleep(0.5)
    figures.wall_s = time.monotonic() - started
    figures.completed = len(done)
    figures.lost = [incident for incident in incidents if incident not in done]
    comments = _comment_files(settings.publish_dir / "github")
    for incident in incidents:
        distinct = {e.event.meta.event_id for e in published(store, registry, incident)}
        if len(distinct) > 1 or comments.get(incident, 0) > 1:
            figures.duplicated.append(incident)
    figures.ledger_verified = all(report.ok for report in verify_all(store, registry))
    return figures


def _comment_files(folder: Path) -> dict[str, int]:
    """GitHub comments written (dry run) per incident, by the incident id in the file's name."""
    counts: dict[str, int] = {}
    for path in folder.rglob("*.md") if folder.is_dir() else []:
        incident = path.stem.rpartition("_")[2]
        if incident.startswith("inc-"):
            counts[incident] = counts.get(incident, 0) + 1
    return counts
