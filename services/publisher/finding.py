"""What the publisher tells people, reduced to one value object, whatever event brought it."""

from __future__ import annotations

from dataclasses import dataclass, field

from contracts.events.context import UpstreamRiskDetected
from contracts.events.repair import RepairWithheld
from contracts.events.validation import RepairValidated, ValidationFailed

Publishable = RepairValidated | ValidationFailed | RepairWithheld | UpstreamRiskDetected

STAGES = {
    "repair_validated": "WORK_IN_PROGRESS",
    "validation_failed": "INVESTIGATION",
    "repair_withheld": "INVESTIGATION",
    "upstream_risk": "TRIAGE",
}


@dataclass(frozen=True)
class Finding:
    incident_id: str
    outcome: str
    title: str
    entities: list[str]
    repository: str | None
    pull_request: int | None
    payload: Publishable
    owners: list[str] = field(default_factory=list)

    @property
    def stage(self) -> str:
        return STAGES[self.outcome]


def finding_of(incident_id: str, payload: Publishable) -> Finding:
    if isinstance(payload, UpstreamRiskDetected):
        models = [a.model_urn for a in payload.affected]
        owners = sorted({o for a in payload.affected for o in a.owners})
        return Finding(
            incident_id,
            "upstream_risk",
            f"Upstream {payload.cause.replace('_', ' ')} on {payload.asset_urn} puts {len(models)} model(s) at risk",
            sorted(set(models)),
            None,
            None,
            payload,
            owners,
        )
    gate = payload.gate
    outcome = {RepairValidated: "repair_validated", ValidationFailed: "validation_failed"}.get(
        type(payload), "repair_withheld"
    )
    title = f"{gate.metric} regressed {gate.baseline:.4f} → {gate.candidate:.4f} on {payload.workspace.model_urn}"
    return Finding(
        incident_id,
        outcome,
        title,
        [payload.workspace.model_urn],
        payload.workspace.repository,
        payload.workspace.pull_request,
        payload,
    )
