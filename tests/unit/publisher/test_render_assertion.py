"""The model's gate as a DataHub assertion with one run per evaluation, and the incidents linked to the assertion
that failed (the model's gate, or an upstream assertion) as DataHub's own assertion incidents are."""

from __future__ import annotations

from datahub.metadata.schema_classes import AssertionInfoClass, AssertionRunEventClass

from services.publisher.finding import finding_of
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_assertion import gate_assertion_urn, render_gate_assertion
from services.publisher.render_comment import render_content
from services.publisher.render_incident import render_incidents
from tests.unit.publisher.publisher_inputs import INCIDENT, MODEL, upstream_risk_payload, validated_payload


def test_one_assertion_per_model_and_gate_metric_with_a_run_per_evaluation() -> None:
    payload = validated_payload("run-7")
    draft = render_gate_assertion(INCIDENT, payload.run_id, payload.workspace, payload.gate, 1_700_000_000_000)
    assert draft.urn == gate_assertion_urn(MODEL, payload.gate.metric) != gate_assertion_urn(MODEL, "roc_auc")
    assert draft.urn != gate_assertion_urn(MODEL.replace("churn", "upsell"), payload.gate.metric)
    custom = draft.info.customAssertion
    assert draft.info.type == "CUSTOM" and custom is not None and custom.entity == MODEL
    assert draft.info.source is not None and draft.info.source.type == "EXTERNAL"
    assert str(payload.gate.tolerance) in (custom.logic or "")
    run = draft.run
    assert (run.asserteeUrn, run.assertionUrn, run.runId, run.status) == (
        MODEL,
        draft.urn,
        f"{INCIDENT}/run-7",
        "COMPLETE",
    )
    assert run.result is not None and run.result.type == "FAILURE"
    assert run.result.actualAggValue == payload.gate.candidate
    native = run.result.nativeResults or {}
    assert float(native["baseline"]) == payload.gate.baseline and native["metric_source"] == payload.gate.metric_source
    assert native["candidate_commit"] == payload.workspace.candidate_commit
    # DataHub's own classes read back what is written
    assert AssertionInfoClass.from_obj(draft.info.to_obj()) == draft.info
    assert AssertionRunEventClass.from_obj(run.to_obj()) == run


def test_a_gate_that_held_is_a_successful_run() -> None:
    payload = validated_payload()
    held = payload.gate.model_copy(update={"regressed": False})
    draft = render_gate_assertion(INCIDENT, "run-1", payload.workspace, held, 1)
    assert draft.run.result is not None and draft.run.result.type == "SUCCESS"


def test_the_models_incident_names_its_gate_assertion_as_its_source() -> None:
    payload = validated_payload()
    finding = finding_of(INCIDENT, payload)
    links = PublicationLinks(INCIDENT)
    urn = gate_assertion_urn(MODEL, payload.gate.metric)
    (draft,) = render_incidents(finding, render_content(finding), links, 1000, urn)
    assert draft.info.source is not None
    assert (draft.info.source.type, draft.info.source.sourceUrn) == ("ASSERTION_FAILURE", urn)


def test_an_upstream_risk_links_the_upstream_assertion_that_failed_and_nothing_else() -> None:
    failed = upstream_risk_payload().model_copy(
        update={"cause": "assertion_failed", "source_urn": "urn:li:assertion:raw-customers-not-null"}
    )
    raised = upstream_risk_payload().model_copy(
        update={"cause": "incident_raised", "source_urn": "urn:li:incident:freshness-1"}
    )
    for payload, expected in (
        (failed, ("ASSERTION_FAILURE", "urn:li:assertion:raw-customers-not-null")),
        (raised, ("MANUAL", None)),
    ):
        finding = finding_of(INCIDENT, payload)
        drafts = render_incidents(
            finding, render_content(finding), PublicationLinks(INCIDENT), 1000, payload.source_urn
        )
        assert len(drafts) == len(payload.affected) > 1
        for draft in drafts:
            assert draft.info.source is not None
            assert (draft.info.source.type, draft.info.source.sourceUrn) == expected
