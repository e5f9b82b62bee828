"""Which incidents a finding raises in DataHub, under which URNs, with which priority and assignees."""

from __future__ import annotations

from services.publisher.finding import finding_of
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_comment import render_content
from services.publisher.render_incident import PRIORITY_HIGH, PRIORITY_MEDIUM, IncidentDraft, render_incidents
from tests.unit.publisher.publisher_inputs import (
    INCIDENT,
    MODEL,
    OWNERS,
    UPSTREAM,
    failed_payload,
    upstream_risk_payload,
    validated_payload,
)


def _drafts(payload: object, ledger_position: int | None = None) -> list[IncidentDraft]:
    finding = finding_of(INCIDENT, payload)  # type: ignore[arg-type]
    links = PublicationLinks(INCIDENT, ledger_position=ledger_position, attestation_digest="d" * 64)
    return render_incidents(finding, render_content(finding), links, 1000)


def test_the_model_incident_is_high_priority_when_a_deployment_is_in_service() -> None:
    (in_service,) = _drafts(validated_payload(in_service=True))
    (out_of_service,) = _drafts(validated_payload(in_service=False))
    assert (in_service.info.priority, out_of_service.info.priority) == (PRIORITY_HIGH, PRIORITY_MEDIUM)
    assert in_service.urn == out_of_service.urn == "urn:li:incident:modelguard-0123456789abcdef"
    info = in_service.info
    assert (info.type, info.customType, info.entities) == ("CUSTOM", "ML_MODEL_REGRESSION", [MODEL])
    assert sorted(a.actor for a in info.assignees or []) == sorted(OWNERS)
    assert info.source is not None and info.source.type == "MANUAL"


def test_the_description_links_back_to_the_incident_its_ledger_position_and_attestation() -> None:
    (with_position,) = _drafts(failed_payload(), ledger_position=17)
    (without,) = _drafts(failed_payload())
    assert with_position.info.status.stage == "INVESTIGATION"
    description = with_position.info.description or ""
    assert f"`{INCIDENT}`" in description and "ledger position 17" in description and "d" * 64 in description
    assert "ledger position" not in (without.info.description or "")
    assert with_position.content_digest == without.content_digest  # links are not content


def test_a_source_data_quality_diagnosis_also_raises_an_incident_on_the_upstream_dataset() -> None:
    model, dataset = _drafts(validated_payload(top="source_data_quality"))
    assert dataset.info.entities == [UPSTREAM] and dataset.info.customType == "ML_UPSTREAM_DATA_QUALITY"
    assert dataset.urn.startswith(model.urn + "-") and dataset.urn != model.urn
    assert len(_drafts(validated_payload(top="feature_transformation"))) == 1


def test_an_upstream_risk_raises_one_incident_per_affected_model() -> None:
    drafts = _drafts(upstream_risk_payload())
    assert [d.info.entities for d in drafts] == [[a.model_urn] for a in upstream_risk_payload().affected]
    assert len({d.urn for d in drafts}) == 2
    deployed, undeployed = drafts
    assert (deployed.info.priority, undeployed.info.priority) == (PRIORITY_HIGH, PRIORITY_MEDIUM)
    assert [a.actor for a in undeployed.info.assignees or []] == ["urn:li:corpuser:bob"]
    assert all(d.info.status.stage == "TRIAGE" for d in drafts)
