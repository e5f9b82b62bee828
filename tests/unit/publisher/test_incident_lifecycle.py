"""Reconciling the wanted incident with DataHub's: people own the lifecycle once they touch it."""

from __future__ import annotations

from datahub.metadata.schema_classes import AuditStampClass, IncidentAssigneeClass, IncidentInfoClass

from services.publisher.finding import finding_of
from services.publisher.incident_lifecycle import reconcile
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_comment import render_content
from services.publisher.render_incident import render_incidents
from tests.unit.publisher.publisher_inputs import INCIDENT, OWNERS, validated_payload, withheld_payload

PERSON = "urn:li:corpuser:carol"


def _wanted(payload: object = None, attestation: str | None = "a" * 64, at_ms: int = 1000) -> IncidentInfoClass:
    finding = finding_of(INCIDENT, payload or validated_payload())  # type: ignore[arg-type]
    links = PublicationLinks(INCIDENT, attestation_digest=attestation)
    return render_incidents(finding, render_content(finding), links, at_ms)[0].info


def _copy(info: IncidentInfoClass) -> IncidentInfoClass:
    return IncidentInfoClass.from_obj(info.to_obj())


def test_nothing_there_is_created_and_the_same_again_is_a_noop_whatever_the_time_and_attestation() -> None:
    first = reconcile(None, _wanted())
    assert first.status == "created" and first.aspect is not None
    again = reconcile(first.aspect, _wanted(attestation="b" * 64, at_ms=99_000))
    assert again.status == "noop" and again.aspect is None


def test_a_change_updates_and_keeps_the_creation_stamp() -> None:
    current = _wanted(withheld_payload(), at_ms=1000)
    decision = reconcile(current, _wanted(validated_payload(), at_ms=5000))
    assert decision.status == "updated" and decision.aspect is not None
    assert decision.aspect.created.time == 1000
    assert decision.aspect.status.stage == "WORK_IN_PROGRESS" and decision.aspect.status.lastUpdated.time == 5000


def test_resolved_by_a_person_is_left_alone() -> None:
    current = _copy(_wanted())
    current.status.state = "RESOLVED"
    current.status.lastUpdated = AuditStampClass(time=2000, actor=PERSON)
    decision = reconcile(current, _wanted(withheld_payload()))
    assert decision.status == "noop" and "resolved" in decision.reason


def test_a_stage_a_person_set_is_kept_while_the_content_is_updated() -> None:
    current = _copy(_wanted(validated_payload()))
    current.status.stage = "FIXED"
    current.status.lastUpdated = AuditStampClass(time=2000, actor=PERSON)
    decision = reconcile(current, _wanted(validated_payload(metric=0.81)))
    assert decision.status == "updated" and decision.aspect is not None
    assert decision.aspect.status.stage == "FIXED" and decision.aspect.status.lastUpdated.actor == PERSON
    assert "0.8100" in (decision.aspect.description or "")


def test_priority_only_rises_and_assignees_are_only_added() -> None:
    current = _copy(_wanted(validated_payload(in_service=False)))
    assert current.priority == 2
    current.priority = 0  # a person made it CRITICAL
    current.assignees = [IncidentAssigneeClass(actor=PERSON, assignedAt=AuditStampClass(time=3, actor=PERSON))]
    decision = reconcile(current, _wanted(validated_payload(in_service=True)))
    assert decision.aspect is not None and decision.aspect.priority == 0
    assert [a.actor for a in decision.aspect.assignees or []] == [PERSON, *sorted(OWNERS)]
