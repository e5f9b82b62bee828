"""The diagnosis in the contract's words: who owns the model and its upstream data, and the reviewer's
markdown of an abstention because a workspace command could not run."""

from __future__ import annotations

from contracts.context_snapshot import ContextSnapshot, LineagePath, Owner, Provenance
from services.diagnoser.report import context_summary

FETCHED = "2025-03-10T14:05:00+00:00"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn,PROD)"
RAW = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.customers,PROD)"
FEATURES = "urn:li:dataset:(urn:li:dataPlatform:snowflake,ml.features,PROD)"
ELSEWHERE = "urn:li:dataset:(urn:li:dataPlatform:snowflake,finance.invoices,PROD)"
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,features,prod),build)"


def owner(entity: str, who: str) -> Owner:
    return Owner(
        entity_urn=entity,
        owner_urn=who,
        type="TECHNICAL_OWNER",
        provenance=Provenance(provider="file", urn=entity, aspect="ownership", fetched_at=FETCHED),
    )


def snapshot() -> ContextSnapshot:
    return ContextSnapshot(
        model_urn=MODEL,
        provider="file",
        fetched_at=FETCHED,
        owners=(
            owner(MODEL, "urn:li:corpuser:priya"),
            owner(RAW, "urn:li:corpuser:dana"),
            owner(RAW, "urn:li:corpGroup:crm-eng"),
            owner(FEATURES, "urn:li:corpuser:priya"),
            owner(JOB, "urn:li:corpuser:job-owner"),
            owner(ELSEWHERE, "urn:li:corpuser:finance"),
        ),
        upstream_paths=(
            LineagePath(
                direction="upstream",
                urns=(RAW, JOB, FEATURES, MODEL),
                relationships=("Consumes", "Produces", "TrainedOn"),
                via_lineage=True,
                stop_reason="root",
            ),
        ),
    )


def test_upstream_owners_are_the_owners_of_every_dataset_on_the_models_lineage() -> None:
    summary = context_summary(snapshot())
    assert summary.model_owners == ["urn:li:corpuser:priya"]
    assert summary.upstream_datasets == [RAW]
    # the datasets' owners, sorted: not the job's, not those of a dataset off the lineage
    assert summary.upstream_owners == ["urn:li:corpGroup:crm-eng", "urn:li:corpuser:dana", "urn:li:corpuser:priya"]


def test_no_lineage_means_no_upstream_owners() -> None:
    bare = ContextSnapshot(
        model_urn=MODEL, provider="file", fetched_at=FETCHED, owners=(owner(RAW, "urn:li:corpuser:x"),)
    )
    assert context_summary(bare).upstream_owners == []
