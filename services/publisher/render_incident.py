"""The DataHub incidents for a finding, as acryl-datahub aspect objects under deterministic URNs.

One incident on the affected model; for a source-data-quality diagnosis, one more on each upstream dataset the
context names; for an upstream risk, one on each affected model. An incident raised by a failed assertion says so
as DataHub's own assertion incidents do (source `ASSERTION_FAILURE` with the assertion's URN): the model's gate
(render_assertion), or for an upstream risk the upstream assertion that failed; any other is `MANUAL`.

A URN is derived from the ModelGuard incident id (itself a digest of the finding) and, where several incidents come
from one finding, the entity's URN, so a retry names the same incidents and re-emitting updates them instead of
raising new ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from datahub.metadata.schema_classes import (
    AuditStampClass,
    IncidentAssigneeClass,
    IncidentInfoClass,
    IncidentSourceClass,
    IncidentStatusClass,
)

from contracts.events.context import AffectedModel
from contracts.outcomes import Outcome
from libs.canonical_json import canonical_bytes, sha256_hex
from services.publisher.finding import Finding
from services.publisher.publication_links import PublicationLinks, content_of, with_footer

ACTOR = "urn:li:corpuser:modelguard"
# DataHub's incident priorities: 0 CRITICAL, 1 HIGH, 2 MEDIUM, 3 LOW.
PRIORITY_HIGH = 1
PRIORITY_MEDIUM = 2
MODEL_REGRESSION = "ML_MODEL_REGRESSION"
UPSTREAM_DATA_QUALITY = "ML_UPSTREAM_DATA_QUALITY"
UPSTREAM_RISK = "ML_UPSTREAM_RISK"


@dataclass(frozen=True)
class IncidentDraft:
    """The incident ModelGuard wants to exist, before it is reconciled with what DataHub holds."""

    urn: str
    info: IncidentInfoClass

    @property
    def content_digest(self) -> str:
        """What the incident says, without timestamps or links: equal digests mean nothing to publish."""
        info = self.info
        return sha256_hex(
            canonical_bytes(
                {
                    "type": info.type,
                    "customType": info.customType,
                    "title": info.title,
                    "description": content_of(info.description or ""),
                    "entities": sorted(info.entities),
                    "stage": info.status.stage,
                    "priority": info.priority,
                    "assignees": sorted(a.actor for a in info.assignees or []),
                }
            )
        )


def incident_urn(finding: Finding, entity_urn: str | None = None) -> str:
    base = f"urn:li:incident:modelguard-{finding.incident_id.removeprefix('inc-')}"
    return base if entity_urn is None else f"{base}-{sha256_hex(entity_urn.encode())[:12]}"


def _info(
    finding: Finding,
    *,
    custom_type: str,
    title: str,
    entities: list[str],
    owners: list[str],
    priority: int,
    description: str,
    at_ms: int,
    assertion_urn: str | None,
) -> IncidentInfoClass:
    stamp = AuditStampClass(time=at_ms, actor=ACTOR)
    info = IncidentInfoClass(
        type="CUSTOM",
        customType=custom_type,
        title=title,
        description=description,
        entities=sorted(set(entities)),
        status=IncidentStatusClass(
            state="ACTIVE", stage=finding.stage, lastUpdated=stamp, message=finding.outcome.value
        ),
        created=stamp,
        priority=priority,
        assignees=[IncidentAssigneeClass(actor=o, assignedAt=stamp) for o in sorted(set(owners))] or None,
        source=IncidentSourceClass(type="ASSERTION_FAILURE", sourceUrn=assertion_urn)
        if assertion_urn
        else IncidentSourceClass(type="MANUAL"),
    )
    info.validate()
    return info


def _affected_model_draft(
    finding: Finding, model: AffectedModel, description: str, at_ms: int, assertion_urn: str | None
) -> IncidentDraft:
    # The event names deployments without their status: a deployed model is treated as in service.
    info = _info(
        finding,
        custom_type=UPSTREAM_RISK,
        title=f"{finding.title}: {model.model_urn}",
        entities=[model.model_urn],
        owners=model.owners,
        priority=PRIORITY_HIGH if model.deployments else PRIORITY_MEDIUM,
        description=description,
        at_ms=at_ms,
        assertion_urn=assertion_urn,
    )
    return IncidentDraft(incident_urn(finding, model.model_urn), info)


def render_incidents(
    finding: Finding, content: str, links: PublicationLinks, at_ms: int, source_urn: str | None = None
) -> list[IncidentDraft]:
    """``source_urn``: the model's gate assertion, or for an upstream risk the entity that reported the change
    (linked as the source only when it is an assertion)."""
    description = with_footer(content, links)
    if finding.outcome == Outcome.UPSTREAM_RISK:
        assertion = source_urn if source_urn and source_urn.startswith("urn:li:assertion:") else None
        return [_affected_model_draft(finding, m, description, at_ms, assertion) for m in finding.affected]
    priority = PRIORITY_HIGH if finding.in_service else PRIORITY_MEDIUM
    drafts = [
        IncidentDraft(
            incident_urn(finding),
            _info(
                finding,
                custom_type=MODEL_REGRESSION,
                title=finding.title,
                entities=finding.entities,
                owners=finding.owners,
                priority=priority,
                description=description,
                at_ms=at_ms,
                assertion_urn=source_urn,
            ),
        )
    ]
    # The dataset's own owners (from the diagnosis's context summary), then the model's, who asked for the fix.
    drafts += [
        IncidentDraft(
            incident_urn(finding, dataset),
            _info(
                finding,
                custom_type=UPSTREAM_DATA_QUALITY,
                title=f"Source data quality of {dataset} is the leading cause: {finding.title}",
                entities=[dataset],
                owners=[*finding.dataset_owners.get(dataset, []), *finding.model_owners],
                priority=priority,
                description=description,
                at_ms=at_ms,
                assertion_urn=source_urn,
            ),
        )
        for dataset in finding.upstream_assets
    ]
    return drafts
