"""Upstream risk detection from MCLs against the churn scenario's mirror: who is at risk, and only once."""

from __future__ import annotations

from pathlib import Path

import pytest
from datahub.emitter.mce_builder import make_schema_field_urn
from datahub.metadata.schema_classes import (
    AssertionResultClass,
    AssertionResultTypeClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
    AuditStampClass,
    DataJobInfoClass,
    DataJobInputOutputClass,
    IncidentInfoClass,
    IncidentSourceClass,
    IncidentStateClass,
    IncidentStatusClass,
    IncidentTypeClass,
    NumberTypeClass,
    SchemaFieldClass,
    SchemaFieldDataTypeClass,
    SchemaMetadataClass,
    StatusClass,
    StringTypeClass,
)

from contracts.events.context import AffectedModel, UpstreamRiskDetected
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from services.context.upstream_risk import detect_upstream_risk, handle_upstream_mcl
from services.context.upstream_risk_dedup import RiskDeduplicator
from tests.unit.mcl.mcl_test_inputs import (
    Churn,
    avro_message,
    churn_mirror,
    churn_raw_schema,
    decoded,
    mcl_record,
    without_column,
)

NOW = "2025-03-11T08:00:00Z"
INCIDENT = "urn:li:incident:churn-features-late"
STAMP = AuditStampClass(time=1_741_672_800_000, actor="urn:li:corpuser:datahub")


@pytest.fixture
def mirror() -> MetadataMirror:
    return churn_mirror()


def _with_column_type(schema: SchemaMetadataClass, path: str, native: str) -> SchemaMetadataClass:
    changed = SchemaMetadataClass.from_obj(schema.to_obj())
    for field in changed.fields:
        if field.fieldPath == path:
            field.type = SchemaFieldDataTypeClass(type=StringTypeClass())
            field.nativeDataType = native
    return changed


def _schema_mcl(mirror: MetadataMirror, current: SchemaMetadataClass, *, with_previous: bool = True) -> dict:
    previous = churn_raw_schema(mirror) if with_previous else None
    return mcl_record(Churn.RAW, "schemaMetadata", current, previous)


def _run(result: str) -> AssertionRunEventClass:
    return AssertionRunEventClass(
        timestampMillis=1_741_672_800_000,
        runId="customers-nightly-2025-03-11",
        asserteeUrn=Churn.RAW,
        assertionUrn=Churn.ASSERTION,
        status=AssertionRunStatusClass.COMPLETE,
        result=AssertionResultClass(type=result, rowCount=6000, unexpectedCount=12),
    )


def _incident(state: str, *entities: str) -> IncidentInfoClass:
    return IncidentInfoClass(
        type=IncidentTypeClass.FRESHNESS,
        title="churn_features did not refresh",
        entities=list(entities),
        status=IncidentStatusClass(state=state, lastUpdated=STAMP),
        source=IncidentSourceClass(type="MANUAL"),
        created=STAMP,
    )


def _expected_affected(path: tuple[str, ...]) -> list[AffectedModel]:
    return [
        AffectedModel(
            model_urn=Churn.MODEL,
            deployments=[Churn.DEPLOYMENT],
            owners=list(Churn.MODEL_OWNERS),
            path=list(path),
        )
    ]


# --- schema changes --------------------------------------------------------------------------------------


def test_removing_a_column_of_the_raw_dataset_puts_the_churn_model_and_its_deployment_at_risk(
    mirror: MetadataMirror,
) -> None:
    message = avro_message(_schema_mcl(mirror, without_column(churn_raw_schema(mirror), "account_age_months")))
    mcl = MclDecoder(ShippedSchemaResolver()).decode_avro(message)
    assert mcl is not None

    risk = detect_upstream_risk(mcl, mirror)

    assert isinstance(risk, UpstreamRiskDetected)
    assert (risk.cause, risk.asset_urn) == ("schema_change", Churn.RAW)
    assert risk.affected == _expected_affected((Churn.RAW, Churn.FEATURES, Churn.ACCOUNT_AGE, Churn.MODEL))
    assert "column 'account_age_months' removed" in risk.change_summary
    assert "field-level" in risk.change_summary and Churn.DEPLOYMENT in risk.change_summary
    assert len(risk.change_fingerprint) == 64


def test_a_type_change_is_a_risk_with_its_own_fingerprint(mirror: MetadataMirror) -> None:
    schema = churn_raw_schema(mirror)
    removed = detect_upstream_risk(decoded(_schema_mcl(mirror, without_column(schema, "account_age_months"))), mirror)
    retyped = detect_upstream_risk(
        decoded(_schema_mcl(mirror, _with_column_type(schema, "account_age_months", "VARCHAR(8)"))), mirror
    )

    assert removed is not None and retyped is not None
    assert "type changed from NumberType NUMBER(38,0) to StringType VARCHAR(8)" in retyped.change_summary
    assert retyped.affected[0].model_urn == Churn.MODEL
    assert retyped.change_fingerprint != removed.change_fingerprint


def test_a_repeat_of_the_same_change_is_reported_once(mirror: MetadataMirror, tmp_path: Path) -> None:
    record = _schema_mcl(mirror, without_column(churn_raw_schema(mirror), "account_age_months"))
    dedup = RiskDeduplicator.open(tmp_path)

    first = handle_upstream_mcl(decoded(record), mirror, dedup)
    assert first is not None
    dedup.remember(first.change_fingerprint, NOW)
    dedup.close()

    assert handle_upstream_mcl(decoded(record), mirror, RiskDeduplicator.open(tmp_path)) is None


def test_a_redelivery_before_the_risk_was_remembered_is_reported_again_with_the_same_fingerprint(
    mirror: MetadataMirror,
) -> None:
    record = _schema_mcl(mirror, without_column(churn_raw_schema(mirror), "account_age_months"))
    dedup = RiskDeduplicator.in_memory()

    first = handle_upstream_mcl(decoded(record), mirror, dedup)
    again = handle_upstream_mcl(decoded(record), mirror, dedup)

    assert first is not None and again is not None
    assert first.change_fingerprint == again.change_fingerprint


def test_without_previous_aspect_value_the_mirror_s_stored_schema_is_the_previous_one(mirror: MetadataMirror) -> None:
    record = _schema_mcl(mirror, without_column(churn_raw_schema(mirror), "account_age_months"), with_previous=False)
    dedup = RiskDeduplicator.in_memory()

    risk = handle_upstream_mcl(decoded(record), mirror, dedup)

    assert risk is not None and risk.cause == "schema_change"
    assert handle_upstream_mcl(decoded(record), mirror, dedup) is None  # applied: nothing changed any more


def test_a_change_on_an_unrelated_dataset_or_a_harmless_change_is_no_risk(mirror: MetadataMirror) -> None:
    schema = churn_raw_schema(mirror)
    unrelated = mcl_record(Churn.UNRELATED, "schemaMetadata", without_column(schema, "region"), schema)
    added = SchemaMetadataClass.from_obj(schema.to_obj())
    added.fields.append(
        SchemaFieldClass(fieldPath="nps", type=SchemaFieldDataTypeClass(NumberTypeClass()), nativeDataType="NUMBER")
    )

    assert detect_upstream_risk(decoded(unrelated), mirror) is None
    assert detect_upstream_risk(decoded(_schema_mcl(mirror, added)), mirror) is None
    assert detect_upstream_risk(decoded(_schema_mcl(mirror, schema)), mirror) is None


def test_the_first_schema_of_a_dataset_is_not_a_change(mirror: MetadataMirror) -> None:
    schema = churn_raw_schema(mirror)
    new_dataset = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.crm.leads,PROD)"

    assert detect_upstream_risk(decoded(mcl_record(new_dataset, "schemaMetadata", schema)), mirror) is None


def test_a_soft_deleted_model_is_not_at_risk(mirror: MetadataMirror) -> None:
    mirror.apply(decoded(mcl_record(Churn.MODEL, "status", StatusClass(removed=True))))
    record = _schema_mcl(mirror, without_column(churn_raw_schema(mirror), "account_age_months"))

    assert detect_upstream_risk(decoded(record), mirror) is None


# --- assertions, jobs, incidents ---------------------------------------------------------------------------


def test_a_failed_assertion_run_on_the_raw_dataset_is_a_field_level_risk(mirror: MetadataMirror) -> None:
    failed = decoded(mcl_record(Churn.ASSERTION, "assertionRunEvent", _run(AssertionResultTypeClass.FAILURE)))

    risk = detect_upstream_risk(failed, mirror)

    assert risk is not None and (risk.cause, risk.asset_urn) == ("assertion_failed", Churn.RAW)
    assert risk.source_urn == Churn.ASSERTION, "the failed assertion, which DataHub incidents link to"
    assert risk.affected == _expected_affected((Churn.RAW, Churn.FEATURES, Churn.ACCOUNT_AGE, Churn.MODEL))
    assert "account_age_months is never negative" in risk.change_summary and "field-level" in risk.change_summary
    passed = decoded(mcl_record(Churn.ASSERTION, "assertionRunEvent", _run(AssertionResultTypeClass.SUCCESS)))
    assert detect_upstream_risk(passed, mirror) is None


def test_a_change_to_the_feature_job_s_inputs_or_code_is_a_risk(mirror: MetadataMirror) -> None:
    io = mirror.aspect(Churn.FEATURE_JOB, "dataJobInputOutput")
    assert isinstance(io, DataJobInputOutputClass)
    extra = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.crm.payments,PROD)"
    changed_io = DataJobInputOutputClass.from_obj(io.to_obj())
    changed_io.inputDatasets = [*changed_io.inputDatasets, extra]

    risk = detect_upstream_risk(decoded(mcl_record(Churn.FEATURE_JOB, "dataJobInputOutput", changed_io, io)), mirror)

    assert risk is not None and (risk.cause, risk.asset_urn) == ("job_changed", Churn.FEATURE_JOB)
    assert risk.affected[0].model_urn == Churn.MODEL and risk.affected[0].deployments == [Churn.DEPLOYMENT]
    assert f"inputs added: {extra}" in risk.change_summary

    info = mirror.aspect(Churn.FEATURE_JOB, "dataJobInfo")
    assert isinstance(info, DataJobInfoClass)
    changed_info = DataJobInfoClass.from_obj(info.to_obj())
    changed_info.customProperties = {**changed_info.customProperties, "git_sha": "deadbeef"}
    info_risk = detect_upstream_risk(decoded(mcl_record(Churn.FEATURE_JOB, "dataJobInfo", changed_info, info)), mirror)
    assert info_risk is not None and "customProperties" in info_risk.change_summary
    assert detect_upstream_risk(decoded(mcl_record(Churn.FEATURE_JOB, "dataJobInfo", info, info)), mirror) is None


def test_an_incident_raised_on_an_upstream_dataset_is_a_risk_once_it_becomes_active(mirror: MetadataMirror) -> None:
    raised = decoded(mcl_record(INCIDENT, "incidentInfo", _incident(IncidentStateClass.ACTIVE, Churn.FEATURES)))

    risk = detect_upstream_risk(raised, mirror)

    assert risk is not None and (risk.cause, risk.asset_urn) == ("incident_raised", Churn.FEATURES)
    assert risk.source_urn == INCIDENT
    assert risk.affected[0].model_urn == Churn.MODEL
    assert "FRESHNESS incident" in risk.change_summary
    still_active = mcl_record(
        INCIDENT,
        "incidentInfo",
        _incident(IncidentStateClass.ACTIVE, Churn.FEATURES),
        _incident(IncidentStateClass.ACTIVE, Churn.FEATURES),
    )
    assert detect_upstream_risk(decoded(still_active), mirror) is None
    resolved = mcl_record(INCIDENT, "incidentInfo", _incident(IncidentStateClass.RESOLVED, Churn.FEATURES))
    assert detect_upstream_risk(decoded(resolved), mirror) is None


def test_an_incident_on_a_column_is_traced_from_that_column(mirror: MetadataMirror) -> None:
    column = make_schema_field_urn(Churn.RAW, "account_age_months")
    raised = decoded(mcl_record(INCIDENT, "incidentInfo", _incident(IncidentStateClass.ACTIVE, column)))

    risk = detect_upstream_risk(raised, mirror)

    assert risk is not None and risk.asset_urn == Churn.RAW
    assert "field-level" in risk.change_summary
