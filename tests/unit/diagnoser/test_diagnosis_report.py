"""The diagnosis in the contract's words: who owns the model and its upstream data (flat, and per asset with
DataHub's records), and which upstream datasets a cause in the data lies in."""

from __future__ import annotations

from contracts.context_snapshot import ContextSnapshot, LineagePath, Owner, Provenance, SchemaField
from contracts.events.diagnosis import ColumnRename, RepairHints
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


def field(dataset: str, name: str) -> SchemaField:
    return SchemaField(
        dataset_urn=dataset,
        field_path=name,
        field_urn=f"urn:li:schemaField:({dataset},{name})",
        simple_path=name,
        native_type="double",
        normalised_type="number",
        nullable=True,
        provenance=Provenance(provider="file", urn=dataset, aspect="schemaMetadata", fetched_at=FETCHED),
    )


def with_fields(*fields: SchemaField) -> ContextSnapshot:
    return snapshot().model_copy(update={"schema_fields": fields})


def test_owner_records_per_asset_the_model_then_each_lineage_dataset_most_upstream_first() -> None:
    summary = context_summary(snapshot())
    assert summary.model_ownership is not None and summary.model_ownership.asset == MODEL
    assert [(o.owner_urn, o.type) for o in summary.model_ownership.owners] == [
        ("urn:li:corpuser:priya", "TECHNICAL_OWNER")
    ]
    assert [entry.asset for entry in summary.dataset_ownership] == [RAW, FEATURES]  # not the job, not ELSEWHERE
    assert [o.owner_urn for o in summary.dataset_ownership[0].owners] == [
        "urn:li:corpGroup:crm-eng",
        "urn:li:corpuser:dana",
    ]


def test_a_data_cause_lies_in_the_lineage_datasets_that_hold_the_faulty_columns() -> None:
    context = with_fields(field(RAW, "plan"), field(FEATURES, "tenure"), field(ELSEWHERE, "tenure"))
    assert context_summary(context, RepairHints(null_columns=["tenure"])).cause_datasets == [FEATURES]
    renamed = RepairHints(renamed_columns=[ColumnRename(old="tenure_months", new="plan")])
    assert context_summary(context, renamed).cause_datasets == [RAW]
    both = with_fields(field(RAW, "tenure"), field(FEATURES, "tenure"))
    assert context_summary(both, RepairHints(unseen_categories={"tenure": ["x"]})).cause_datasets == [RAW, FEATURES]


def test_without_a_faulty_column_a_data_cause_lies_in_the_lineages_source_datasets() -> None:
    assert context_summary(with_fields(field(FEATURES, "tenure")), RepairHints()).cause_datasets == [RAW]
    assert context_summary(snapshot(), RepairHints(null_columns=["not_in_any_schema"])).cause_datasets == [RAW]


def test_a_model_datahub_knows_no_owner_of_is_listed_with_none() -> None:
    bare = ContextSnapshot(model_urn=MODEL, provider="file", fetched_at=FETCHED)
    summary = context_summary(bare, RepairHints(null_columns=["tenure"]))
    assert summary.model_ownership is not None
    assert (summary.model_ownership.asset, summary.model_ownership.owners) == (MODEL, [])
    assert (summary.dataset_ownership, summary.cause_datasets) == ([], [])
