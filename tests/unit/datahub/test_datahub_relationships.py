"""Relationship specs come from the SDK's @Relationship annotations; edges come from aspect values."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import avro.schema
import datahub
import pytest
from datahub.metadata.schema_classes import ChangeAuditStampsClass, ChartInfoClass

from libs.datahub import relationships
from libs.datahub.fine_grained import aspects_with_fine_grained_lineage, field_edges_from_aspect
from libs.datahub.mcp_file import AspectRecord, load_mcp_file
from libs.datahub.relationships import Edge, edges_from_aspect, relationship_specs, relationship_table
from tests.unit.datahub.datahub_test_inputs import golden

SCHEMA_DIR = Path(datahub.__file__).parent / "metadata" / "schemas"

# REFERENCE.md's table, as (aspect, path of the urn in the aspect, relationship, isLineage, isUpstream),
# plus where the annotation sits in the .avsc file (annotated field, path key or None for a direct one).
REFERENCE_ROWS = [
    ("upstreamLineage", "upstreams/*/dataset", "DownstreamOf", True, True, "dataset", None),
    (
        "upstreamLineage",
        "fineGrainedLineages/*/upstreams/*",
        "DownstreamOf",
        False,
        True,
        "fineGrainedLineages",
        "/*/upstreams/*",
    ),
    ("dataJobInputOutput", "inputDatasets/*", "Consumes", True, True, "inputDatasets", "/*"),
    (
        "dataJobInputOutput",
        "inputDatasetEdges/*/destinationUrn",
        "Consumes",
        True,
        True,
        "inputDatasetEdges",
        "/*/destinationUrn",
    ),
    ("dataJobInputOutput", "outputDatasets/*", "Produces", True, False, "outputDatasets", "/*"),
    ("dataJobInputOutput", "inputDatajobs/*", "DownstreamOf", True, True, "inputDatajobs", "/*"),
    ("mlModelProperties", "trainingJobs/*", "TrainedBy", True, True, "trainingJobs", "/*"),
    ("mlModelProperties", "mlFeatures/*", "Consumes", True, True, "mlFeatures", "/*"),
    ("mlModelProperties", "groups/*", "MemberOf", True, False, "groups", "/*"),
    ("mlModelProperties", "deployments/*", "DeployedTo", False, True, "deployments", "/*"),
    ("mlFeatureProperties", "sources/*", "DerivedFrom", True, True, "sources", "/*"),
    ("mlFeatureTableProperties", "mlFeatures/*", "Contains", False, True, "mlFeatures", "/*"),
    ("assertionInfo", "datasetAssertion/dataset", "Asserts", False, True, "dataset", None),
    ("assertionInfo", "datasetAssertion/fields/*", "Asserts", False, True, "fields", "/*"),
    ("incidentInfo", "entities/*", "IncidentOn", False, True, "entities", "/*"),
    ("ownership", "owners/*/owner", "OwnedBy", False, True, "owner", None),
]


def _spec(aspect: str, field_path: str) -> relationships.RelationshipSpec:
    matches = [spec for spec in relationship_specs(aspect) if spec.field_path == field_path]
    assert len(matches) == 1, f"{aspect} {field_path}: {matches}"
    return matches[0]


def _avsc_annotations(aspect: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(field name, Relationship annotation) pairs read straight from the aspect's .avsc file."""
    for path in SCHEMA_DIR.glob("*.avsc"):
        document = json.loads(path.read_text())
        if document.get("Aspect", {}).get("name") == aspect:
            yield from _annotated_fields(document)
            return
    raise AssertionError(f"no .avsc file for aspect {aspect}")


def _annotated_fields(node: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        if "Relationship" in node and "name" in node:
            yield node["name"], node["Relationship"]
        for value in node.values():
            yield from _annotated_fields(value)
    elif isinstance(node, list):
        for value in node:
            yield from _annotated_fields(value)


@pytest.mark.parametrize(
    ("aspect", "field_path", "name", "is_lineage", "is_upstream", "annotated_field", "path_key"), REFERENCE_ROWS
)
def test_reference_relationships_are_derived_from_the_avsc_annotations(
    aspect: str,
    field_path: str,
    name: str,
    is_lineage: bool,
    is_upstream: bool,
    annotated_field: str,
    path_key: str | None,
) -> None:
    spec = _spec(aspect, field_path)
    annotations = [
        (annotation[path_key] if path_key else annotation)
        for field, annotation in _avsc_annotations(aspect)
        if field == annotated_field and (path_key in annotation if path_key else "name" in annotation)
    ]

    assert (spec.name, spec.is_lineage, spec.is_upstream) == (name, is_lineage, is_upstream)
    assert annotations, f"{aspect}.{annotated_field} carries no Relationship annotation in the .avsc file"
    for annotation in annotations:
        assert annotation["name"] == spec.name
        assert annotation.get("isLineage", False) == spec.is_lineage
        assert annotation.get("isUpstream", True) == spec.is_upstream
        assert tuple(annotation["entityTypes"]) == spec.entity_types


def test_upstream_lineage_names_the_query_it_came_through() -> None:
    assert _spec("upstreamLineage", "upstreams/*/dataset").via_path == ("upstreams", "*", "query")


def test_the_table_covers_every_aspect_and_has_no_duplicates() -> None:
    table = relationship_table()
    keys = [(spec.aspect_name, spec.path, spec.name) for spec in table]

    assert len(keys) == len(set(keys))
    assert {"upstreamLineage", "dataJobInputOutput", "mlModelProperties", "chartInfo"} <= {
        spec.aspect_name for spec in table
    }


def test_a_field_level_path_annotation_overrides_the_nested_one() -> None:
    tag_specs = [spec for spec in relationship_specs("schemaMetadata") if spec.path[-1] == "tag"]

    assert {(spec.field_path, spec.name) for spec in tag_specs} == {
        ("fields/*/globalTags/tags/*/tag", "SchemaFieldTaggedWith")
    }


def test_specs_follow_whatever_the_schema_annotates(monkeypatch: pytest.MonkeyPatch) -> None:
    schema = avro.schema.parse(
        json.dumps(
            {
                "type": "record",
                "name": "Probe",
                "namespace": "com.linkedin.pegasus2avro.test",
                "fields": [
                    {
                        "name": "owner",
                        "type": "string",
                        "Relationship": {"name": "ProbedBy", "entityTypes": ["corpuser"]},
                    },
                    {
                        "name": "byKey",
                        "type": {"type": "map", "values": "string"},
                        "Relationship": {"/*": {"name": "Maps", "entityTypes": ["dataset"], "isLineage": True}},
                    },
                    {
                        "name": "either",
                        "type": {
                            "type": "array",
                            "items": [
                                "string",
                                {
                                    "type": "record",
                                    "name": "Inner",
                                    "fields": [
                                        {
                                            "name": "target",
                                            "type": "string",
                                            "Relationship": {
                                                "name": "Feeds",
                                                "entityTypes": ["dataJob"],
                                                "isLineage": True,
                                                "isUpstream": False,
                                            },
                                        }
                                    ],
                                },
                            ],
                        },
                    },
                ],
            }
        )
    )
    probe_class = type("ProbeClass", (), {"RECORD_SCHEMA": schema})
    monkeypatch.setitem(relationships.ASPECT_MAP, "probeAspectForTest", probe_class)
    relationship_specs.cache_clear()
    try:
        specs = {(s.field_path, s.name, s.is_lineage, s.is_upstream) for s in relationship_specs("probeAspectForTest")}
    finally:
        relationship_specs.cache_clear()

    assert specs == {
        ("owner", "ProbedBy", False, True),
        ("byKey/*", "Maps", True, True),
        ("either/*/com.linkedin.test.Inner/target", "Feeds", True, False),
    }


def test_union_member_paths_are_walked_in_values() -> None:
    dataset = "urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD)"
    chart = ChartInfoClass(title="t", description="d", lastModified=ChangeAuditStampsClass(), inputs=[dataset])

    edges = edges_from_aspect("urn:li:chart:(looker,c1)", "chartInfo", chart)

    assert [(e.destination, e.relationship, e.field_path) for e in edges] == [(dataset, "Consumes", "inputs/*/string")]


def _records(name: str) -> tuple[AspectRecord, ...]:
    return load_mcp_file(golden(name)).records


def _edges(name: str, aspect_name: str) -> list[Edge]:
    return [
        edge
        for record in _records(name)
        if record.aspect_name == aspect_name
        for edge in edges_from_aspect(record.urn, record.aspect_name, record.aspect)
    ]


def test_sagemaker_model_edges() -> None:
    model = "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-second-model,PROD)"
    edges = {
        (e.relationship, e.destination.split(",")[1], e.is_lineage, e.destination_is_upstream)
        for e in _edges("sagemaker_mces_golden.json", "mlModelProperties")
        if e.source == model
    }

    assert edges == {
        ("TrainedBy", "training:a-training-job", True, True),
        ("UsedBy", "edge_packaging:an-edge-packaging-job", True, False),
        ("UsedBy", "transform:a-transform-job", True, False),
        ("MemberOf", "a-model-package-group", True, False),
        ("DeployedTo", "arn:aws:sagemaker:us-west-2:123412341234:endpoint/the-second-endpoint", False, True),
    }


def test_feature_table_edges_contain_features_and_primary_keys() -> None:
    table = "urn:li:mlFeatureTable:(urn:li:dataPlatform:sagemaker,test-1)"
    edges = [e for e in _edges("sagemaker_mces_golden.json", "mlFeatureTableProperties") if e.source == table]

    assert sorted((e.relationship, e.destination) for e in edges) == [
        ("Contains", "urn:li:mlFeature:(test-1,height)"),
        ("Contains", "urn:li:mlFeature:(test-1,name)"),
        ("Contains", "urn:li:mlFeature:(test-1,time)"),
        ("KeyedBy", "urn:li:mlPrimaryKey:(test-1,id)"),
    ]
    assert not any(e.is_lineage for e in edges)


def test_data_job_input_output_edges_from_airflow_and_vertexai() -> None:
    airflow = {
        (e.relationship, e.destination, e.destination_is_upstream)
        for e in _edges("airflow_v2_athena_operator.json", "dataJobInputOutput")
        if e.is_lineage
    }
    vertex = _edges("vertexai_mcps_golden.json", "dataJobInputOutput")

    assert airflow == {
        ("Consumes", "urn:li:dataset:(urn:li:dataPlatform:athena,athena_db.costs,PROD)", True),
        ("Produces", "urn:li:dataset:(urn:li:dataPlatform:athena,athena_db.processed_costs,PROD)", False),
        ("Produces", "urn:li:dataset:(urn:li:dataPlatform:s3,athena-results-bucket,PROD)", False),
    }
    assert [(e.relationship, e.destination.rsplit(".", 1)[1]) for e in vertex] == [("DownstreamOf", "concat)")]


def test_upstream_lineage_edges_carry_the_query_and_fine_grained_upstreams() -> None:
    edges = _edges("sql-queries_lazy-schema-loading.json", "upstreamLineage")
    sessions = "urn:li:dataset:(urn:li:dataPlatform:snowflake,snowflake.db.sessions,PROD)"
    query = "urn:li:query:ac1bdb4a206870224b316a0412c4b4b57544f56f9e8618d490546d8268c26ab9"

    lineage = [e for e in edges if e.is_lineage]
    column_level = [e for e in edges if not e.is_lineage]
    assert [(e.destination, e.relationship, e.via) for e in lineage] == [(sessions, "DownstreamOf", query)]
    assert [e.destination for e in column_level] == [f"urn:li:schemaField:({sessions},user_id)"]


def test_assertion_ownership_and_incident_style_edges() -> None:
    asserts = _edges("ge_mcps_golden.json", "assertionInfo")
    owners = _edges("iceberg_profile_mcps_golden.json", "ownership")

    assert {e.relationship for e in asserts} == {"Asserts"}
    assert any(e.destination.startswith("urn:li:schemaField:") for e in asserts)
    assert any(e.destination.startswith("urn:li:dataset:") for e in asserts)
    assert sorted((e.relationship, e.destination) for e in owners) == [
        ("OwnedBy", "urn:li:corpGroup:root"),
        ("OwnedBy", "urn:li:corpuser:root"),
    ]


def test_fine_grained_lineage_gives_column_pairs() -> None:
    assert aspects_with_fine_grained_lineage() >= {"upstreamLineage", "dataJobInputOutput"}
    sql = [
        edge
        for record in _records("sql-queries_lazy-schema-loading.json")
        for edge in field_edges_from_aspect(record.urn, record.aspect_name, record.aspect)
    ]
    airflow = [
        edge
        for record in _records("airflow_v2_athena_operator.json")
        for edge in field_edges_from_aspect(record.urn, record.aspect_name, record.aspect)
    ]

    assert len(sql) == 1
    assert sql[0].upstream.endswith("snowflake.db.sessions,PROD),user_id)")
    assert sql[0].downstream.endswith("snowflake.db.audit_log,PROD),user_id)")
    assert sql[0].confidence_score == pytest.approx(0.2)
    assert sql[0].transform_operation and sql[0].query
    # 5 fineGrainedLineages entries; cost_per_area is computed from two columns: 6 column pairs.
    assert len(airflow) == 6
    assert all(e.upstream.split(",")[1] == "athena_db.costs" for e in airflow)
    cost_per_area = sorted(e.upstream.rsplit(",", 1)[1] for e in airflow if e.downstream.endswith(",cost_per_area)"))
    assert cost_per_area == ["area)", "total_cost)"]
