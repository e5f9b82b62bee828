"""Metadata evidence from a DataHub context snapshot: lineage into the model, assertions, open incidents."""

from __future__ import annotations

from contracts.context_snapshot import (
    AssertionSignal,
    ContextEntity,
    ContextSnapshot,
    IncidentSignal,
    LineagePath,
    Provenance,
)
from services.diagnoser.evidence import EvidenceKind, of_kind
from services.diagnoser.metadata_evidence import as_snapshot, assertion_fields, field_name, metadata_evidence
from services.diagnoser.signals import Signal, detect_signals

MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn,PROD)"
RAW = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.customers,PROD)"
FEATURES = "urn:li:dataset:(urn:li:dataPlatform:snowflake,ml.features,PROD)"
FEATURE_JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,features,prod),build_features)"
TRAIN_JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,training,prod),train)"
AGE_FIELD = f"urn:li:schemaField:({RAW},account_age_months)"
FETCHED = "2025-01-01T00:00:00+00:00"


def provenance(urn: str, aspect: str) -> Provenance:
    return Provenance(provider="test", urn=urn, aspect=aspect, fetched_at=FETCHED)


def job(urn: str, name: str, code_path: str) -> ContextEntity:
    return ContextEntity(
        urn=urn,
        entity_type="dataJob",
        name=name,
        properties={"code_path": code_path},
        provenance=provenance(urn, "dataJobInfo"),
    )


def snapshot(assertion_result: str = "SUCCESS", incident_state: str | None = None) -> ContextSnapshot:
    incidents = ()
    if incident_state is not None:
        incidents = (
            IncidentSignal(
                incident_urn="urn:li:incident:raw-late",
                entities=(RAW,),
                title="customers extract late",
                state=incident_state,
                provenance=provenance("urn:li:incident:raw-late", "incidentInfo"),
            ),
        )
    return ContextSnapshot(
        model_urn=MODEL,
        provider="test",
        fetched_at=FETCHED,
        entities=(
            job(FEATURE_JOB, "build_features", "pkg/features.py"),
            job(TRAIN_JOB, "train", "pkg/train.py"),
        ),
        assertions=(
            AssertionSignal(
                assertion_urn="urn:li:assertion:age-non-negative",
                asserted_entities=(RAW,),
                fields=(AGE_FIELD,),
                description="account_age_months is never negative",
                latest_result=assertion_result,
                provenance=provenance("urn:li:assertion:age-non-negative", "assertionInfo"),
            ),
        ),
        incidents=incidents,
        upstream_paths=(
            LineagePath(
                direction="upstream",
                urns=(RAW, FEATURE_JOB, FEATURES, TRAIN_JOB, MODEL),
                relationships=("Consumes", "Produces", "Consumes", "TrainedBy"),
                via_lineage=True,
                stop_reason="root",
            ),
        ),
    )


def test_changed_feature_code_on_the_model_lineage_is_evidence_for_it() -> None:
    evidence = metadata_evidence(snapshot(), ["pkg/features.py"], {"pkg/features.py"})
    [lineage] = of_kind(evidence, EvidenceKind.LINEAGE_PATH)
    assert lineage.values["changed_feature_files_on_path"] == ["pkg/features.py"]
    assert lineage.values["path_names"][1] == "build_features"
    assert Signal.CHANGED_FEATURE_CODE_ON_LINEAGE in detect_signals(evidence)


def test_changed_training_code_on_the_lineage_is_told_apart() -> None:
    evidence = metadata_evidence(snapshot(), ["pkg/train.py"], {"pkg/features.py"})
    fired = detect_signals(evidence)
    assert Signal.CHANGED_OTHER_CODE_ON_LINEAGE in fired
    assert Signal.CHANGED_FEATURE_CODE_ON_LINEAGE not in fired


def test_assertion_results_on_the_lineage() -> None:
    passing = metadata_evidence(snapshot("SUCCESS"), [], set())
    failing = metadata_evidence(snapshot("FAILURE"), [], set())
    assert of_kind(passing, EvidenceKind.ASSERTION_RESULT)[0].values["fields"] == ["account_age_months"]
    assert Signal.ASSERTION_PASSING in detect_signals(passing)
    assert Signal.ASSERTION_FAILING in detect_signals(failing)


def test_only_open_incidents_count() -> None:
    assert Signal.UPSTREAM_INCIDENT_OPEN in detect_signals(
        metadata_evidence(snapshot(incident_state="ACTIVE"), [], set())
    )
    resolved = metadata_evidence(snapshot(incident_state="RESOLVED"), [], set())
    assert Signal.UPSTREAM_INCIDENT_OPEN not in detect_signals(resolved)


def test_snapshot_round_trips_through_its_json_dict() -> None:
    original = snapshot()
    assert as_snapshot(original.model_dump(mode="json")) == original
    assert as_snapshot(None) is None
    assert assertion_fields(original) == ["account_age_months"]
    assert field_name(AGE_FIELD) == "account_age_months"
    assert metadata_evidence(None, [], set()) == []
