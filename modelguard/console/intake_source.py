"""Where the console finds the context service's ``/metrics`` (the MCL intake's counts), asked at each page.

- Configured (``--context-metrics URL`` or ``MODELGUARD_CONSOLE_CONTEXT_METRICS_URL``): that URL; deployed, the
  context service's port 8080 (``http://modelguard-context:8080/metrics`` on Kubernetes, ``http://context:8080/
  metrics`` in compose).
- Otherwise the embedded stack of this home, when its context service runs: its loopback health port, as
  ``modelguard stack up`` recorded it in ``stack.json``. A stack that is down has no counts to give: the page
  says so (the counts live in the context service's own state, which the console does not open).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from modelguard.console.mcl_intake_counts import IntakeReading, read_intake_counts
from modelguard.health_ports import metrics_url
from modelguard.stack import pid_alive, read_state

CONTEXT = "context"


class IntakeCountsSource(Protocol):
    def read(self) -> IntakeReading: ...


@dataclass(frozen=True)
class NoMetrics:
    """No context service to ask (an app built without one, in a test)."""

    def read(self) -> IntakeReading:
        return IntakeReading(None, problem="this console was started without the context service's /metrics")


@dataclass(frozen=True)
class ConfiguredMetrics:
    url: str

    def read(self) -> IntakeReading:
        return read_intake_counts(self.url)


@dataclass(frozen=True)
class StackMetrics:
    """The context service of the embedded stack that runs from ``home``, if one does."""

    home: Path

    def read(self) -> IntakeReading:
        try:
            state = read_state(self.home)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return IntakeReading(None, problem=f"the stack's state in {self.home} does not read ({type(exc).__name__})")
        port = state.health_ports.get(CONTEXT) if state is not None else None
        if state is None or port is None or not pid_alive(state.services.get(CONTEXT)):
            return IntakeReading(
                None,
                problem=f"no context service runs from {self.home}: the counts are read from its /metrics while it "
                "runs (`modelguard stack up`), or from MODELGUARD_CONSOLE_CONTEXT_METRICS_URL",
            )
        return read_intake_counts(metrics_url(port))
