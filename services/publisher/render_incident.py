"""The DataHub incident for a finding, as acryl-datahub aspect objects under a deterministic URN."""

from __future__ import annotations

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import (
    AuditStampClass,
    IncidentInfoClass,
    IncidentSourceClass,
    IncidentStatusClass,
)

from libs.canonical_json import canonical_bytes, sha256_hex
from services.publisher.finding import Finding

ACTOR = "urn:li:corpuser:modelguard"


def incident_urn(finding: Finding) -> str:
    return f"urn:li:incident:modelguard-{finding.incident_id.removeprefix('inc-')}"


def incident_semantics(finding: Finding) -> dict[str, object]:
    """What the incident says; its digest decides whether a publication changes anything."""
    return {
        "type": "CUSTOM",
        "customType": "ML_MODEL_REGRESSION" if finding.outcome != "upstream_risk" else "ML_UPSTREAM_RISK",
        "title": finding.title,
        "entities": sorted(finding.entities),
        "stage": finding.stage,
        "priority": 1 if finding.outcome == "upstream_risk" else 2,
        "outcome": finding.outcome,
    }


def incident_digest(finding: Finding) -> str:
    return sha256_hex(canonical_bytes(incident_semantics(finding)))


def render_incident(finding: Finding, description: str, at_ms: int) -> list[MetadataChangeProposalWrapper]:
    semantics = incident_semantics(finding)
    stamp = AuditStampClass(time=at_ms, actor=ACTOR)
    info = IncidentInfoClass(
        type="CUSTOM",
        customType=str(semantics["customType"]),
        title=finding.title,
        description=description,
        entities=sorted(finding.entities),
        status=IncidentStatusClass(state="ACTIVE", stage=finding.stage, lastUpdated=stamp, message=finding.outcome),
        created=stamp,
        priority=int(semantics["priority"]),  # type: ignore[call-overload]
        source=IncidentSourceClass(type="MANUAL"),
    )
    info.validate()
    return [MetadataChangeProposalWrapper(entityUrn=incident_urn(finding), aspect=info)]
