"""What the publisher tells people, reduced to one value object, whatever event brought it."""

from __future__ import annotations

from dataclasses import dataclass, field

from contracts.catalogue import Hypothesis
from contracts.common import owner_urns
from contracts.events.context import AffectedModel, UpstreamRiskDetected
from contracts.events.repair import RepairWithheld
from contracts.events.validation import RepairValidated, ValidationFailed
from contracts.outcomes import PUBLISHED_OUTCOME_OF, Outcome, PublicationState, PublishedOutcome, publication_state

Publishable = RepairValidated | ValidationFailed | RepairWithheld | UpstreamRiskDetected

IN_SERVICE = "IN_SERVICE"

# DataHub incident stages, in the order ModelGuard moves an incident (a person takes it further).
STAGES: dict[PublicationState, str] = {
    PublicationState.REPAIR_ABSTAINED: "TRIAGE",
    PublicationState.UPSTREAM_RISK: "TRIAGE",
    PublicationState.VALIDATION_FAILED: "INVESTIGATION",
    PublicationState.REPAIR_WITHHELD: "INVESTIGATION",
    PublicationState.REPAIR_VALIDATED: "WORK_IN_PROGRESS",
}


@dataclass(frozen=True)
class Finding:
    incident_id: str
    outcome: PublishedOutcome
    title: str
    entities: list[str]
    repository: str | None
    pull_request: int | None
    payload: Publishable
    owners: list[str] = field(default_factory=list)
    """Who the incident is assigned to: for a withheld repair the owners it names (a cause in the data: its
    datasets' owners first), otherwise the model's."""
    model_owners: list[str] = field(default_factory=list)
    dataset_owners: dict[str, list[str]] = field(default_factory=dict)
    """Each upstream dataset's own owners, as DataHub records them."""
    head_sha: str | None = None
    in_service: bool = False
    upstream_assets: list[str] = field(default_factory=list)
    affected: list[AffectedModel] = field(default_factory=list)
    abstained: bool = False

    @property
    def state(self) -> PublicationState:
        """What people are told: the outcome, an abstention told apart from a withheld repair."""
        return publication_state(self.outcome, self.abstained)

    @property
    def stage(self) -> str:
        return STAGES[self.state]


def _upstream_finding(incident_id: str, payload: UpstreamRiskDetected) -> Finding:
    models = sorted({a.model_urn for a in payload.affected})
    return Finding(
        incident_id=incident_id,
        outcome=Outcome.UPSTREAM_RISK,
        title=f"Upstream {payload.cause.replace('_', ' ')} on {payload.asset_urn} puts {len(models)} model(s) at risk",
        entities=models,
        repository=None,
        pull_request=None,
        payload=payload,
        owners=sorted({o for a in payload.affected for o in a.owners}),
        affected=list(payload.affected),
    )


def _assignees(payload: RepairValidated | ValidationFailed | RepairWithheld) -> list[str]:
    model_owners = sorted(set(payload.diagnosis.context_summary.model_owners))
    if isinstance(payload, RepairWithheld):
        return owner_urns(payload.owners) if payload.owners else (list(payload.owners_to_notify) or model_owners)
    return model_owners


def finding_of(incident_id: str, payload: Publishable) -> Finding:
    if isinstance(payload, UpstreamRiskDetected):
        return _upstream_finding(incident_id, payload)
    gate = payload.gate
    outcome = PUBLISHED_OUTCOME_OF[type(payload).__name__]
    report = payload.diagnosis
    summary = report.context_summary
    top = report.hypotheses[0].name if report.hypotheses else None
    return Finding(
        incident_id=incident_id,
        outcome=outcome,
        title=f"{gate.metric} regressed {gate.baseline:.4f} → {gate.candidate:.4f} on {payload.workspace.model_urn}",
        entities=[payload.workspace.model_urn],
        repository=payload.workspace.repository,
        pull_request=payload.workspace.pull_request,
        payload=payload,
        owners=_assignees(payload),
        model_owners=sorted(set(summary.model_owners)),
        dataset_owners={entry.asset: owner_urns([entry]) for entry in summary.dataset_ownership},
        head_sha=payload.workspace.candidate_commit,
        in_service=any(d.status == IN_SERVICE for d in summary.deployments),
        upstream_assets=sorted(set(summary.upstream_datasets)) if top == Hypothesis.SOURCE_DATA_QUALITY else [],
        abstained=isinstance(payload, RepairWithheld) and payload.hypothesis is None,
    )
