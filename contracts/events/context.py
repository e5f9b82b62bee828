"""Events of the context phase: DataHub context for an incident, and upstream risks from DataHub."""

from __future__ import annotations

from pydantic import Field

from contracts.common import Frozen, IncidentState
from contracts.context_snapshot import ContextSnapshot


class ContextCollected(IncidentState):
    context: ContextSnapshot
    context_digest: str = Field(pattern=r"^[0-9a-f]{64}$")


class AffectedModel(Frozen):
    model_urn: str
    deployments: list[str]
    owners: list[str]
    path: list[str] = Field(description="URNs from the changed asset down to the model")


class UpstreamRiskDetected(Frozen):
    """An upstream change reported by DataHub that can hurt models downstream."""

    cause: str = Field(description="schema_change | assertion_failed | job_changed | incident_raised")
    asset_urn: str
    change_summary: str
    change_fingerprint: str = Field(pattern=r"^[0-9a-f]{64}$")
    affected: list[AffectedModel]
    source_urn: str | None = Field(
        default=None,
        description="since 1.1: the DataHub entity that reported the change, when it is not the asset itself: the "
        "failed assertion (assertion_failed) or the raised incident (incident_raised)",
    )
