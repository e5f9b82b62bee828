"""What ModelGuard has concluded about one CI run of an incident, from the incident's verified events, the dead
letters of the run, and the clock.

Statuses, in the order they are decided:

- `published` (the investigation's finding is published), `passed` (the gate passed) and `environment_failed`
  (the environment a revision declares could not be built): done, with the outcome (libs.events.outcome) and its
  CI result (`ci`: pass or fail, by the incident's policy's `ci` section);
- `dead_lettered`: a service refused an input of the run, so nothing more will happen; `reason` names the
  service, the input and why;
- `stuck`: the run's last event is older than `stuck_after_s` and nothing came since; `reason` says how long;
- `regressed` (the gate failed; the investigation is under way) and `pending` (reported, gate not applied yet).

`finished` is true for the first five: the CI can stop waiting. Only `published`, `passed` and
`environment_failed` have a `ci` result. The statuses are ``contracts.outcomes.RunStatus``, the outcomes its
``Outcome``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from contracts.common import PolicyRef
from contracts.events.publication import Published
from contracts.outcomes import FINISHED_RUN_STATUSES, Outcome, RunStatus
from libs.events.codec import SignedEvent
from libs.events.outcome import IncompleteInvestigation, outcome_of
from libs.policy.ci import CiPolicy, CiResult
from services.detector.dead_letter_log import RefusedInput


@dataclass(frozen=True)
class Verdict:
    incident_id: str
    run_id: str
    status: RunStatus
    finished: bool
    outcome: Outcome | None
    gate: dict[str, Any] | None
    events: list[str]
    ci: CiResult | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def events_of_run(events: Sequence[SignedEvent], run_id: str) -> list[SignedEvent]:
    return [e for e in events if getattr(e.event.payload, "run_id", None) == run_id]


def governing_policy(events: Sequence[SignedEvent], run_id: str) -> PolicyRef | None:
    """The policy the detector gated the run by (recorded in its gate event), if it has gated it."""
    for e in events_of_run(events, run_id):
        if e.event.meta.event_type in ("EvaluationPassed", "RegressionDetected"):
            policy: PolicyRef = e.event.payload.policy
            return policy
    return None


def _published_outcome(of_run: Sequence[SignedEvent], published: Published) -> Outcome:
    try:
        return outcome_of(of_run)
    except IncompleteInvestigation:  # a finding published without its phase's event in the log: say what it said
        return published.outcome


def _stalled_for(of_run: Sequence[SignedEvent], now: datetime | None, stuck_after_s: float | None) -> str | None:
    if not of_run or now is None or stuck_after_s is None:
        return None
    last = max(of_run, key=lambda e: e.event.meta.occurred_at).event.meta
    quiet = (now - last.occurred_at).total_seconds()
    if quiet < stuck_after_s:
        return None
    return (
        f"nothing happened for {quiet:.0f} s since {last.event_type} from {last.producer} "
        f"(a run is stuck after {stuck_after_s:.0f} s)"
    )


def verdict_of(
    incident_id: str,
    run_id: str,
    events: Sequence[SignedEvent],
    *,
    dead_letters: Sequence[RefusedInput] = (),
    ci: CiPolicy | None = None,
    now: datetime | None = None,
    stuck_after_s: float | None = None,
) -> Verdict:
    of_run = events_of_run(events, run_id)
    types = [e.event.meta.event_type for e in of_run]
    payloads = {e.event.meta.event_type: e.event.payload for e in of_run}
    gate_source = payloads.get("EvaluationPassed") or payloads.get("RegressionDetected")
    gate = gate_source.gate.model_dump(mode="json") if gate_source is not None else None
    ci = ci or CiPolicy()
    outcome: Outcome | None = None
    reason: str | None = None
    status: RunStatus
    if "Published" in payloads:
        status, outcome = RunStatus.PUBLISHED, _published_outcome(of_run, payloads["Published"])
    elif "EvaluationPassed" in payloads:
        status, outcome = RunStatus.PASSED, Outcome.GATE_PASSED
    elif "EnvironmentFailed" in payloads:
        status, outcome = RunStatus.ENVIRONMENT_FAILED, Outcome.ENVIRONMENT_FAILED
        reason = payloads["EnvironmentFailed"].reason
    elif dead_letters:
        status, reason = RunStatus.DEAD_LETTERED, dead_letters[0].line()
    elif (stalled := _stalled_for(of_run, now, stuck_after_s)) is not None:
        status, reason = RunStatus.STUCK, stalled
    elif "RegressionDetected" in payloads:
        status = RunStatus.REGRESSED
    else:
        status = RunStatus.PENDING
    result = ci.result_for(outcome) if outcome is not None else None
    return Verdict(incident_id, run_id, status, status in FINISHED_RUN_STATUSES, outcome, gate, types, result, reason)
