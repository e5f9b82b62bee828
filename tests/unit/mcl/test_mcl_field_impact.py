"""Field-level impact: column-level lineage decides which columns reach ML features and models."""

from __future__ import annotations

from datahub.emitter.mce_builder import make_schema_field_urn
from datahub.metadata.schema_classes import (
    FineGrainedLineageClass,
    FineGrainedLineageDownstreamTypeClass,
    FineGrainedLineageUpstreamTypeClass,
    MLFeaturePropertiesClass,
    MLModelPropertiesClass,
    NumberTypeClass,
    OtherSchemaClass,
    SchemaFieldClass,
    SchemaFieldDataTypeClass,
    SchemaMetadataClass,
    UpstreamClass,
    UpstreamLineageClass,
    _Aspect,
)

from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcp_file import AspectRecord
from tests.unit.mcl.mcl_test_inputs import Churn, churn_mirror

SOURCE = "urn:li:dataset:(urn:li:dataPlatform:postgres,shop.orders,PROD)"
FEATURES = "urn:li:dataset:(urn:li:dataPlatform:snowflake,ml.order_features,PROD)"
BASKET = "urn:li:mlFeature:(orders,basket_value)"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,fraud,PROD)"


def _schema(*paths: str) -> SchemaMetadataClass:
    return SchemaMetadataClass(
        schemaName="t",
        platform="urn:li:dataPlatform:postgres",
        version=0,
        hash="",
        platformSchema=OtherSchemaClass(rawSchema=""),
        fields=[
            SchemaFieldClass(fieldPath=path, type=SchemaFieldDataTypeClass(NumberTypeClass()), nativeDataType="NUMBER")
            for path in paths
        ],
    )


def _column_lineage(pairs: list[tuple[str, str]]) -> list[FineGrainedLineageClass]:
    return [
        FineGrainedLineageClass(
            upstreamType=FineGrainedLineageUpstreamTypeClass.FIELD_SET,
            upstreams=[make_schema_field_urn(SOURCE, source)],
            downstreamType=FineGrainedLineageDownstreamTypeClass.FIELD,
            downstreams=[make_schema_field_urn(FEATURES, target)],
        )
        for source, target in pairs
    ]


def _order_mirror(column_pairs: list[tuple[str, str]], feature_columns: tuple[str, ...]) -> MetadataMirror:
    """orders (amount, discount, coupon_code) -> order_features -> feature basket_value -> fraud model."""
    aspects: list[tuple[str, str, _Aspect]] = [
        (SOURCE, "schemaMetadata", _schema("amount", "discount", "coupon_code")),
        (FEATURES, "schemaMetadata", _schema(*feature_columns)),
        (
            FEATURES,
            "upstreamLineage",
            UpstreamLineageClass(
                upstreams=[UpstreamClass(dataset=SOURCE, type="TRANSFORMED")],
                fineGrainedLineages=_column_lineage(column_pairs),
            ),
        ),
        (BASKET, "mlFeatureProperties", MLFeaturePropertiesClass(sources=[FEATURES])),
        (MODEL, "mlModelProperties", MLModelPropertiesClass(mlFeatures=[BASKET])),
    ]
    mirror = MetadataMirror.in_memory()
    records = [
        AspectRecord(urn.split(":")[2], urn, name, aspect, "test", index)
        for index, (urn, name, aspect) in enumerate(aspects)
    ]
    mirror.bootstrap(records, source="test")
    return mirror


def test_a_column_traced_through_declared_column_lineage_to_a_feature_is_a_field_level_impact() -> None:
    report = churn_mirror().impact_report(Churn.RAW, ["account_age_months"])

    (impact,) = report.impacts
    assert impact.model_urn == Churn.MODEL and impact.precision == "field"
    assert impact.path == (Churn.RAW, Churn.FEATURES, Churn.ACCOUNT_AGE, Churn.MODEL)
    assert impact.deployments == (Churn.DEPLOYMENT,)
    assert report.notes == ()


def test_a_column_without_declared_lineage_is_a_possible_impact_and_the_report_says_so() -> None:
    # churn_features declares the sources of 5 of its 13 columns; plan_* and contract_* have none, so a
    # change to customers.signup_channel may reach them: the model is reported at entity level.
    report = churn_mirror().impact_report(Churn.RAW, ["signup_channel"])

    (impact,) = report.impacts
    assert impact.model_urn == Churn.MODEL and impact.precision == "entity"
    assert any("reaches no ML feature through declared column-level lineage" in note for note in report.notes)


def test_a_column_that_declared_lineage_routes_away_from_every_feature_affects_no_model() -> None:
    mirror = _order_mirror(
        [("amount", "basket_value"), ("coupon_code", "coupon_used")], ("basket_value", "coupon_used")
    )

    assert [impact.precision for impact in mirror.impacted_models(SOURCE, "amount")] == ["field"]
    assert mirror.impacted_models(SOURCE, "coupon_code") == []
    report = mirror.impact_report(SOURCE, ["discount"])
    assert report.impacts == ()
    (note,) = report.notes
    assert note.startswith(f"column 'discount' of {SOURCE} does not flow to any ML model")
    assert [impact.model_urn for impact in mirror.impacted_models(SOURCE)] == [MODEL]  # entity level: all columns


def test_a_feature_whose_name_is_not_a_column_of_its_source_is_assumed_affected() -> None:
    mirror = _order_mirror([("amount", "total"), ("coupon_code", "coupon_used")], ("total", "coupon_used"))

    (impact,) = mirror.impacted_models(SOURCE, "amount")
    assert impact.precision == "entity"  # basket_value is not a column of order_features: no name match
    assert mirror.impacted_models(SOURCE, "coupon_code")[0].precision == "entity"


def test_v2_field_paths_match_simple_column_names() -> None:
    mirror = _order_mirror([("amount", "basket_value")], ("basket_value",))

    (impact,) = mirror.impacted_models(SOURCE, "[version=2.0].[type=double].amount")
    assert impact.precision == "field" and impact.path == (SOURCE, FEATURES, BASKET, MODEL)


def test_field_paths_on_an_entity_without_columns_fall_back_to_entity_level() -> None:
    report = churn_mirror().impact_report(Churn.FEATURE_JOB, ["anything"])

    assert [impact.model_urn for impact in report.impacts] == [Churn.MODEL]
    assert report.notes == (f"field paths are ignored for {Churn.FEATURE_JOB}: only datasets have columns",)
