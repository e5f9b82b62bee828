"""Read models rebuilt from the log by replay: a pure fold of each incident's decoded events.

Status: `passed` (the gate held), `abstained`, `withheld`, `validation_failed` (the pipeline stopped
there), `published` (a validated repair was published), `open` otherwise. Publishing an abstention,
a withheld repair or a failed validation keeps that status; `publications` shows what reached people and
`owners` who a withheld outcome told.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from contracts.catalogue import Hypothesis
from contracts.events.context import ContextCollected, UpstreamRiskDetected
from contracts.events.publication import Published
from contracts.outcomes import IncidentStatus, Outcome
from contracts.registry import Event
from libs.ledger.decoding import decode_row
from libs.ledger.store import LedgerStore
from libs.signing.keys import KeyRegistry

PHASES: dict[str, str] = {
    "EvaluationReported": "detect",
    "RegressionDetected": "detect",
    "EvaluationPassed": "detect",
    "EnvironmentFailed": "detect",
    "UpstreamRiskDetected": "detect",
    "ContextCollected": "context",
    "DiagnosisCompleted": "diagnose",
    "DiagnosisAbstained": "diagnose",
    "RepairProposed": "repair",
    "RepairWithheld": "repair",
    "RepairValidated": "validate",
    "ValidationFailed": "validate",
    "Published": "publish",
}

OUTCOMES: dict[str, IncidentStatus] = {
    "EvaluationPassed": IncidentStatus.PASSED,
    "EnvironmentFailed": IncidentStatus.ENVIRONMENT_FAILED,
    "DiagnosisAbstained": IncidentStatus.ABSTAINED,
    "RepairWithheld": IncidentStatus.WITHHELD,
    "ValidationFailed": IncidentStatus.VALIDATION_FAILED,
}
"""The event that stops an incident -> its status."""
ENDED_BY: dict[str, Outcome] = {
    "EvaluationPassed": Outcome.GATE_PASSED,
    "EnvironmentFailed": Outcome.ENVIRONMENT_FAILED,
}
"""The events that end an incident without a publication -> its outcome."""


class IncidentProjection(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    incident_id: str
    status: IncidentStatus = IncidentStatus.OPEN
    phase: str = ""
    last_event_type: str = ""
    last_event_id: str = ""
    model_urn: str | None = None
    metric: str | None = None
    baseline: float | None = None
    candidate: float | None = None
    after_repair: float | None = None
    hypothesis: Hypothesis | None = None
    confidence: float | None = None
    reason: str | None = None
    owners: dict[str, list[str]] = Field(
        default_factory=dict,
        description="for a withheld outcome, each affected asset -> the owners it told, a cause's data first (an "
        "empty list: DataHub records no owner); events before contracts 1.1 name none here",
    )
    publications: dict[str, str] = Field(default_factory=dict, description="channel -> last status")
    outcome: Outcome | None = Field(
        default=None,
        description="the outcome published (repair_validated, repair_withheld, validation_failed, upstream_risk), "
        "or gate_passed / environment_failed; None while nothing ended the incident",
    )
    cause: str | None = Field(
        default=None, description="an upstream risk's cause: schema_change, assertion_failed, job_changed, ..."
    )
    changed_asset: str | None = Field(default=None, description="the upstream asset whose change opened the risk")
    changed_fields: list[str] = Field(default_factory=list, description="its columns the change touches")
    change_summary: str | None = Field(default=None, description="what changed, as the context service read it")
    deployments: list[str] = Field(
        default_factory=list,
        description="deployments at risk: the model's as DataHub records them, or those an upstream risk reaches",
    )
    event_count: int = 0
    first_at: datetime | None = None
    last_at: datetime | None = None


def apply(state: IncidentProjection, event: Event[Any]) -> IncidentProjection:
    """The projection after one more event of its incident."""
    meta, payload = event.meta, event.payload
    changes: dict[str, Any] = {
        "phase": PHASES.get(meta.event_type, state.phase),
        "last_event_type": meta.event_type,
        "last_event_id": meta.event_id,
        "event_count": state.event_count + 1,
        "first_at": state.first_at or meta.occurred_at,
        "last_at": meta.occurred_at,
    }
    workspace = getattr(payload, "workspace", None)
    if workspace is not None:
        changes["model_urn"] = workspace.model_urn
    elif affected := getattr(payload, "affected", None):
        changes["model_urn"] = state.model_urn or affected[0].model_urn
    if (gate := getattr(payload, "gate", None)) is not None:
        changes.update(metric=gate.metric, baseline=gate.baseline, candidate=gate.candidate)
    if (confidence := getattr(payload, "confidence", None)) is not None:
        changes.update(hypothesis=payload.hypothesis, confidence=confidence)
    if (validation := getattr(payload, "validation", None)) is not None:
        changes["after_repair"] = validation.metric_after_repair
    if isinstance(getattr(payload, "reason", None), str):
        changes["reason"] = payload.reason
    if told := getattr(payload, "owners", None):
        changes["owners"] = {entry.asset: [owner.owner_urn for owner in entry.owners] for entry in told}
    if isinstance(payload, ContextCollected) and payload.context.model is not None:
        changes["deployments"] = list(payload.context.model.deployment_urns)
    if isinstance(payload, UpstreamRiskDetected):
        changes.update(
            cause=payload.cause,
            changed_asset=payload.asset_urn,
            changed_fields=list(payload.changed_fields),
            change_summary=payload.change_summary,
            deployments=sorted({d for affected in payload.affected for d in affected.deployments}),
        )
    if meta.event_type in OUTCOMES:
        changes["status"] = OUTCOMES[meta.event_type]
    if meta.event_type in ENDED_BY:
        changes["outcome"] = ENDED_BY[meta.event_type]
    if isinstance(payload, Published):
        changes["outcome"] = payload.outcome
        changes["publications"] = {**state.publications, **{c.channel: c.status for c in payload.channels}}
        if state.status == IncidentStatus.OPEN:
            changes["status"] = IncidentStatus.PUBLISHED
    return state.model_copy(update=changes)


def project(events: Iterable[Event[Any]]) -> dict[str, IncidentProjection]:
    """Fold events, in log order, into one projection per incident."""
    projections: dict[str, IncidentProjection] = {}
    for event in events:
        incident_id = event.meta.incident_id
        state = projections.get(incident_id) or IncidentProjection(incident_id=incident_id)
        projections[incident_id] = apply(state, event)
    return projections


def replay(
    store: LedgerStore, registry: KeyRegistry | None = None, *, batch: int = 1000
) -> dict[str, IncidentProjection]:
    """Rebuild every incident's projection from the log. With a registry, each envelope's signature is
    checked on the way (an envelope that fails raises); without one, run `verify_all` for the audit."""
    return project(_log(store, registry, batch))


def _log(store: LedgerStore, registry: KeyRegistry | None, batch: int) -> Iterable[Event[Any]]:
    position = 0
    while rows := store.events_after(position, batch):
        for row in rows:
            yield decode_row(row, registry)
        position = rows[-1].position
