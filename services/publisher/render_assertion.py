"""The model's quality gate as a DataHub assertion, and each gated evaluation as one of its runs.

One assertion per model and gate metric, under a URN derived from both, so every evaluation of the model adds a
run to the same assertion and the model's Quality tab shows the gate's history. The assertion is `CUSTOM` (DataHub
has no model-metric type) with source `EXTERNAL`: ModelGuard evaluates it, DataHub records it. Each run is an
`assertionRunEvent` keyed by the incident and CI run, timestamped by the event that carried the gate, with the
measured candidate value, the approved baseline, the tolerance and who computed them. The model's incident links to
the assertion (`ASSERTION_FAILURE`, render_incident).
"""

from __future__ import annotations

from dataclasses import dataclass

from datahub.metadata.schema_classes import (
    AssertionInfoClass,
    AssertionResultClass,
    AssertionRunEventClass,
    AssertionSourceClass,
    CustomAssertionInfoClass,
)

from contracts.common import GateResult, WorkspaceRefs
from libs.canonical_json import canonical_bytes, sha256_hex

GATE_ASSERTION_TYPE = "ModelGuard quality gate"


@dataclass(frozen=True)
class AssertionDraft:
    urn: str
    info: AssertionInfoClass
    run: AssertionRunEventClass

    @property
    def run_id(self) -> str:
        return self.run.runId

    def run_at(self, timestamp_ms: int) -> AssertionRunEventClass:
        """This run as recorded at ``timestamp_ms`` (a timeseries row is keyed by its timestamp)."""
        run = AssertionRunEventClass.from_obj(self.run.to_obj())
        run.timestampMillis = timestamp_ms
        return run

    @property
    def info_digest(self) -> str:
        return sha256_hex(canonical_bytes(self.info.to_obj()))

    @property
    def run_digest(self) -> str:
        return sha256_hex(canonical_bytes(self.run.to_obj()))


def gate_assertion_urn(model_urn: str, metric: str) -> str:
    digest = sha256_hex(canonical_bytes([model_urn, metric]))
    return f"urn:li:assertion:modelguard-gate-{digest[:24]}"


def _number(value: float) -> str:
    return repr(float(value))


def _logic(gate: GateResult) -> str:
    worse = "lower" if gate.direction == "higher_is_better" else "higher"
    return (
        f"{gate.metric} ({gate.direction.replace('_', ' ')}) of the candidate revision on the incident window, "
        f"against the approved baseline on the approval window: the gate fails when the candidate is {worse} than "
        f"the baseline by more than {_number(gate.tolerance)}"
    )


def render_gate_assertion(
    incident_id: str, run_id: str | None, workspace: WorkspaceRefs, gate: GateResult, at_ms: int
) -> AssertionDraft:
    model = workspace.model_urn
    urn = gate_assertion_urn(model, gate.metric)
    info = AssertionInfoClass(
        type="CUSTOM",
        customAssertion=CustomAssertionInfoClass(type=GATE_ASSERTION_TYPE, entity=model, logic=_logic(gate)),
        source=AssertionSourceClass(type="EXTERNAL"),
        description=f"ModelGuard's quality gate on {gate.metric} for {model}",
        customProperties={"metric": gate.metric, "direction": gate.direction, "tolerance": _number(gate.tolerance)},
    )
    native = {
        "metric": gate.metric,
        "baseline": _number(gate.baseline),
        "candidate": _number(gate.candidate),
        "delta": _number(gate.delta),
        "tolerance": _number(gate.tolerance),
        "metric_source": gate.metric_source,
        "incident_id": incident_id,
        "base_commit": workspace.base_commit,
        "candidate_commit": workspace.candidate_commit,
    }
    if workspace.repository:
        native["repository"] = workspace.repository
    if workspace.pull_request:
        native["pull_request"] = str(workspace.pull_request)
    run = AssertionRunEventClass(
        timestampMillis=at_ms,
        runId=f"{incident_id}/{run_id or 'run'}",
        asserteeUrn=model,
        assertionUrn=urn,
        status="COMPLETE",
        result=AssertionResultClass(
            type="FAILURE" if gate.regressed else "SUCCESS", actualAggValue=float(gate.candidate), nativeResults=native
        ),
    )
    info.validate()
    run.validate()
    return AssertionDraft(urn, info, run)
