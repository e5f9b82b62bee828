"""Breaking schema differences: removed, renamed (heuristic), type and nullability changes."""

from __future__ import annotations

from datahub.metadata.schema_classes import (
    NumberTypeClass,
    OtherSchemaClass,
    SchemaFieldClass,
    SchemaFieldDataTypeClass,
    SchemaMetadataClass,
    StringTypeClass,
)

from services.context.upstream_schema_diff import FieldChange, schema_changes

NUMBER, STRING = NumberTypeClass(), StringTypeClass()


def _schema(*fields: tuple[str, object, str, bool]) -> SchemaMetadataClass:
    return SchemaMetadataClass(
        schemaName="customers",
        platform="urn:li:dataPlatform:snowflake",
        version=0,
        hash="",
        platformSchema=OtherSchemaClass(rawSchema=""),
        fields=[
            SchemaFieldClass(
                fieldPath=path,
                type=SchemaFieldDataTypeClass(type=data_type),
                nativeDataType=native,
                nullable=nullable,
            )
            for path, data_type, native, nullable in fields
        ],
    )


BASE = _schema(
    ("customer_id", STRING, "VARCHAR(16)", False),
    ("account_age_months", NUMBER, "NUMBER(38,0)", False),
    ("total_spend", NUMBER, "NUMBER(12,2)", False),
)


def test_identical_schemas_and_added_columns_break_nothing() -> None:
    assert schema_changes(BASE, BASE) == []
    widened = _schema(*_fields(BASE), ("region", STRING, "VARCHAR(16)", True))
    assert schema_changes(BASE, widened) == []


def test_a_removed_column_is_reported() -> None:
    current = _schema(("customer_id", STRING, "VARCHAR(16)", False), ("total_spend", NUMBER, "NUMBER(12,2)", False))

    assert schema_changes(BASE, current) == [FieldChange("removed", "account_age_months", "NumberType NUMBER(38,0)")]


def test_one_removal_and_one_addition_of_the_same_type_is_a_rename() -> None:
    current = _schema(
        ("customer_id", STRING, "VARCHAR(16)", False),
        ("tenure_months", NUMBER, "NUMBER(38,0)", False),
        ("total_spend", NUMBER, "NUMBER(12,2)", False),
    )

    (change,) = schema_changes(BASE, current)
    assert change == FieldChange("renamed", "account_age_months", "account_age_months", "tenure_months")
    assert change.describe() == "column 'account_age_months' renamed to 'tenure_months' (heuristic)"


def test_a_removal_and_an_addition_of_another_type_are_not_paired() -> None:
    current = _schema(
        ("customer_id", STRING, "VARCHAR(16)", False),
        ("tenure", STRING, "VARCHAR(8)", False),
        ("total_spend", NUMBER, "NUMBER(12,2)", False),
    )

    assert [change.kind for change in schema_changes(BASE, current)] == ["removed"]


def test_type_and_nullability_changes_are_reported_per_column() -> None:
    current = _schema(
        ("customer_id", STRING, "VARCHAR(16)", True),
        ("account_age_months", STRING, "VARCHAR(8)", False),
        ("total_spend", NUMBER, "number(12,2)", False),
    )

    assert schema_changes(BASE, current) == [
        FieldChange("type_changed", "account_age_months", "NumberType NUMBER(38,0)", "StringType VARCHAR(8)"),
        FieldChange("nullability_changed", "customer_id", "not null", "nullable"),
    ]


def test_columns_are_matched_by_simple_path_so_v2_paths_do_not_look_renamed() -> None:
    v2 = _schema(
        ("[version=2.0].[type=string].customer_id", STRING, "VARCHAR(16)", False),
        ("[version=2.0].[type=long].account_age_months", NUMBER, "NUMBER(38,0)", False),
        ("[version=2.0].[type=double].total_spend", NUMBER, "NUMBER(12,2)", False),
    )

    assert schema_changes(BASE, v2) == []


def _fields(schema: SchemaMetadataClass) -> list[tuple[str, object, str, bool]]:
    return [(field.fieldPath, field.type.type, field.nativeDataType, field.nullable) for field in schema.fields]
