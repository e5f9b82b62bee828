"""FileContextProvider: a full context snapshot from MCP JSON files."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.entity_description import owners_of, schema_fields_of
from libs.datahub.file_provider import FileContextProvider
from libs.datahub.graph import MetadataGraph
from libs.datahub.mcp_file import MetadataFileError, load_mcp_file
from libs.datahub.ml_context import feature_table_context
from libs.datahub.provenance import ProvenanceStamp
from libs.datahub.provider import ContextProvider
from libs.datahub.quality_signals import assertion_signals, profile_signals
from tests.unit.datahub.datahub_test_inputs import GOLDEN_FILES, SCENARIO_METADATA, Churn, golden, write_churn_metadata

C = Churn
FETCHED_AT = "2024-05-01T12:00:00+00:00"
STAMP = ProvenanceStamp("file", FETCHED_AT)


@pytest.fixture
def churn_file(tmp_path: Path) -> Path:
    return write_churn_metadata(tmp_path)


@pytest.fixture
def churn_snapshot(churn_file: Path) -> ContextSnapshot:
    return FileContextProvider([churn_file]).collect(C.MODEL, FETCHED_AT)


def _graph(path: Path) -> MetadataGraph:
    return MetadataGraph.from_records(load_mcp_file(path).records)


def test_the_provider_implements_the_context_provider_port(churn_file: Path) -> None:
    provider = FileContextProvider([churn_file])

    assert isinstance(provider, ContextProvider)
    assert provider.name == "file"


def test_churn_snapshot_walks_from_the_raw_dataset_to_the_deployment(churn_snapshot: ContextSnapshot) -> None:
    s = churn_snapshot

    assert {p.urns[0] for p in s.upstream_paths} == {C.RAW}
    assert {p.urns[-1] for p in s.upstream_paths} == {C.MODEL}
    deployment_paths = [p for p in s.downstream_paths if p.direction == "deployment"]
    assert [(p.urns, p.via_lineage) for p in deployment_paths] == [((C.MODEL, C.DEPLOYMENT), False)]
    assert any("mlModelProperties.deployments" in w and "not by lineage" in w for w in s.warnings)
    assert [(d.urn, d.status, d.model_urns, d.linked_via) for d in s.deployments] == [
        (C.DEPLOYMENT, "IN_SERVICE", (C.MODEL,), "mlModelProperties.deployments")
    ]


def test_churn_snapshot_model_features_tables_groups_and_jobs(churn_snapshot: ContextSnapshot) -> None:
    s = churn_snapshot
    model = s.model

    assert model is not None
    assert (model.name, model.training_jobs, model.group_urns) == ("churn_model", (C.TRAINING_JOB,), (C.GROUP,))
    assert model.feature_urns == tuple(sorted((C.MONTHLY_SPEND, C.TENURE)))
    assert model.deployment_statuses == {C.DEPLOYMENT: "IN_SERVICE"}
    assert (model.hyper_params, model.training_metrics) == ({"max_depth": "6"}, {"f1": "0.81"})
    assert {(f.urn, f.sources, f.feature_tables) for f in s.features} == {
        (C.MONTHLY_SPEND, (C.TRAINING_DATASET,), (C.FEATURE_TABLE,)),
        (C.TENURE, (C.TRAINING_DATASET,), (C.FEATURE_TABLE,)),
    }
    assert [(t.urn, t.features) for t in s.feature_tables] == [(C.FEATURE_TABLE, model.feature_urns)]
    assert [(g.urn, g.name) for g in s.model_groups] == [(C.GROUP, "churn")]
    jobs = {j.urn: j for j in s.jobs}
    assert (jobs[C.FEATURE_JOB].input_datasets, jobs[C.FEATURE_JOB].output_datasets) == (
        (C.RAW,),
        (C.FEATURE_DATASET,),
    )
    assert jobs[C.FEATURE_JOB].flow_urn == C.FEATURE_FLOW
    assert jobs[C.TRAINING_JOB].output_datasets == (C.TRAINING_DATASET,)


def test_churn_snapshot_schemas_owners_and_quality_signals(churn_snapshot: ContextSnapshot) -> None:
    s = churn_snapshot
    raw_fields = {f.field_path: f for f in s.schema_fields if f.dataset_urn == C.RAW}

    assert {p: (f.normalised_type, f.native_type, f.nullable) for p, f in raw_fields.items()} == {
        "customer_id": ("string", "VARCHAR", False),
        "monthly_spend": ("number", "NUMBER(10,2)", True),
        "tenure_months": ("number", "INTEGER", False),
        "churned": ("boolean", "BOOLEAN", False),
    }
    assert {(o.entity_urn, o.owner_urn, o.type) for o in s.owners} >= {
        (C.RAW, C.DATA_ENGINEER, "TECHNICAL_OWNER"),
        (C.MODEL, C.ML_ENGINEER, "TECHNICAL_OWNER"),
    }
    (assertion,) = s.assertions
    assert (assertion.latest_result, assertion.run_count, assertion.asserted_entities) == ("FAILURE", 2, (C.RAW,))
    assert assertion.result_time == "2023-11-15T22:13:20.000+00:00"
    assert assertion.fields == (f"urn:li:schemaField:({C.RAW},monthly_spend)",)
    (profile,) = s.profiles
    assert (profile.dataset_urn, profile.row_count, profile.null_counts["monthly_spend"]) == (C.RAW, 1000, 37)
    (incident,) = s.incidents
    assert (incident.incident_urn, incident.entities, incident.state) == (C.INCIDENT, (C.FEATURE_DATASET,), "ACTIVE")


def test_churn_snapshot_edges_and_provenance(churn_snapshot: ContextSnapshot, churn_file: Path) -> None:
    s = churn_snapshot
    edges = {(e.source, e.relationship, e.target): e for e in s.edges}

    assert edges[(C.FEATURE_JOB, "Produces", C.FEATURE_DATASET)].target_is_upstream is False
    assert edges[(C.MODEL, "DeployedTo", C.DEPLOYMENT)].is_lineage is False
    assert (C.ASSERTION, "Asserts", C.RAW) in edges
    assert (C.INCIDENT, "IncidentOn", C.FEATURE_DATASET) in edges
    assert all(e.provenance.location == str(churn_file) for e in s.edges)
    assert {e.provenance.provider for e in s.entities} == {"file"}
    assert s.entity(C.RAW).name == "customers"
    assert s.entity(C.RAW).platform == "urn:li:dataPlatform:postgres"
    assert s.entity(C.DEPLOYMENT).provenance.aspect == "mlModelDeploymentProperties"
    (column,) = s.field_lineage
    assert (column.upstream, column.downstream, column.declared_by) == (
        f"urn:li:schemaField:({C.RAW},monthly_spend)",
        f"urn:li:schemaField:({C.FEATURE_DATASET},monthly_spend)",
        C.FEATURE_JOB,
    )
    assert (column.transform_operation, column.provenance.aspect) == (
        "COALESCE(monthly_spend, 0)",
        "dataJobInputOutput",
    )


def test_snapshots_are_deterministic_and_round_trip_through_json(churn_file: Path, tmp_path: Path) -> None:
    provider = FileContextProvider([churn_file])
    first = provider.collect(C.MODEL, FETCHED_AT)
    second = provider.collect(C.MODEL, FETCHED_AT)
    reordered_path = tmp_path / "reordered.json"
    entries = json.loads(churn_file.read_text())
    reordered_path.write_text(json.dumps(list(reversed(entries))))
    reordered = FileContextProvider([reordered_path]).collect(C.MODEL, FETCHED_AT)

    assert first.canonical_json() == second.canonical_json()
    assert first.model_dump_json() == second.model_dump_json()
    assert ContextSnapshot.model_validate_json(first.model_dump_json()) == first
    assert reordered.model_dump_json().replace(str(reordered_path), str(churn_file)) == first.model_dump_json()
    assert first.digest() != provider.collect(C.MODEL, "2024-05-02T12:00:00+00:00").digest()


def test_a_model_missing_from_the_files_gives_warnings_not_errors(churn_file: Path) -> None:
    missing = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,not_there,PROD)"

    snapshot = FileContextProvider([churn_file]).collect(missing, FETCHED_AT)

    assert snapshot.model is None and snapshot.upstream_paths == ()
    assert f"model {missing} has no metadata in the source" in snapshot.warnings
    assert f"no upstream lineage found for model {missing}" in snapshot.warnings


def test_a_malformed_file_fails_the_collect_with_metadata_file_error(churn_file: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('[{"entityUrn": "urn:li:dataset:x", "aspectName": "status", "aspect": {"json": 3}}]')

    with pytest.raises(MetadataFileError, match=r"broken\.json, entry 0"):
        FileContextProvider([churn_file, broken]).collect(C.MODEL, FETCHED_AT)


def test_sagemaker_model_deployments_training_jobs_and_gaps() -> None:
    model = "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-first-model,PROD)"

    s = FileContextProvider([golden("sagemaker_mces_golden.json")]).collect(model, FETCHED_AT)

    assert [j.urn.split(",")[1] for j in s.jobs] == ["training:a-training-job"]
    assert [p.urns[0].split(",")[1] for p in s.upstream_paths] == ["training-job/input-dataset.tar_gz"]
    (deployment,) = s.deployments
    assert deployment.status is None and s.model.deployment_statuses == {deployment.urn: None}
    assert any("dangling reference" in w for w in s.warnings)
    assert [g.name for g in s.model_groups] == ["a-model-package-group"]
    assert any(o.owner_urn == "urn:li:corpuser:some-user" for o in s.owners)


def test_sagemaker_feature_tables_list_their_features() -> None:
    graph = _graph(golden("sagemaker_mces_golden.json"))

    table = feature_table_context(graph, "urn:li:mlFeatureTable:(urn:li:dataPlatform:sagemaker,test-2)", STAMP)

    assert table.features == ("urn:li:mlFeature:(test-2,some-feature-1)", "urn:li:mlFeature:(test-2,some-feature-3)")
    assert table.primary_keys == ("urn:li:mlPrimaryKey:(test-2,some-feature-2)",)
    assert table.description == "Yet another test feature group"


def test_iceberg_schema_fields_ownership_and_profile() -> None:
    graph = _graph(golden("iceberg_profile_mcps_golden.json"))
    taxis = "urn:li:dataset:(urn:li:dataPlatform:iceberg,nyc.taxis,PROD)"

    fields = schema_fields_of(graph, taxis, STAMP)
    owners = owners_of(graph, taxis, STAMP)
    (profile,) = profile_signals(graph, [taxis], STAMP)

    assert [(f.simple_path, f.normalised_type, f.native_type, f.nullable) for f in fields] == [
        ("vendor_id", "number", "long", True),
        ("trip_date", "time", "timestamptz", True),
        ("trip_id", "number", "long", True),
        ("trip_distance", "number", "float", True),
        ("fare_amount", "number", "double", True),
        ("store_and_fwd_flag", "string", "string", True),
    ]
    assert fields[0].field_path == "[version=2.0].[type=struct].[type=long].vendor_id"
    assert sorted((o.owner_urn, o.type) for o in owners) == [
        ("urn:li:corpGroup:root", "TECHNICAL_OWNER"),
        ("urn:li:corpuser:root", "TECHNICAL_OWNER"),
    ]
    assert (profile.row_count, profile.column_count, profile.partition) == (5, 6, "FULL_TABLE_SNAPSHOT")
    assert set(profile.null_counts) == {f.simple_path for f in fields}


def test_great_expectations_assertions_and_their_latest_partition_results() -> None:
    graph = _graph(golden("ge_mcps_golden.json"))
    foo1 = "urn:li:dataset:(urn:li:dataPlatform:postgres,postgres1.postgres.public.foo1,PROD)"

    signals = {a.assertion_urn: a for a in assertion_signals(graph, {foo1}, STAMP)}
    score_between = signals["urn:li:assertion:358c683782c93c2fc2bd4bdd4fdb0153"]

    assert len(signals) == 5
    assert (score_between.latest_result, score_between.run_count) == ("FAILURE", 2)
    assert score_between.latest_partition_results == {
        '{"category": "catA"}': "FAILURE",
        '{"category": "catB"}': "FAILURE",
    }
    assert score_between.fields == (f"urn:li:schemaField:({foo1},score)",)
    assert score_between.native_type == "expect_column_values_to_be_between"
    assert score_between.provenance.aspect == "assertionInfo"
    assert score_between.result_provenance.aspect == "assertionRunEvent"


def test_the_scenario_metadata_walks_from_model_to_sources_and_deployment() -> None:
    if not SCENARIO_METADATA.is_file():
        pytest.skip(f"scenario metadata not written yet: {SCENARIO_METADATA}")
    graph = _graph(SCENARIO_METADATA)
    (model,) = graph.entity_urns("mlModel")

    s = FileContextProvider([SCENARIO_METADATA]).collect(model, FETCHED_AT)

    assert s.model is not None and s.upstream_paths
    for path in s.upstream_paths:
        assert path.urns[-1] == model and path.stop_reason == "root"
        assert graph.upstream_of(path.urns[0]) == ()
    assert any(graph.entity_type(p.urns[0]) == "dataset" for p in s.upstream_paths)
    assert [p.direction for p in s.downstream_paths if p.urns[-1] in s.model.deployment_urns] == ["deployment"] * len(
        s.model.deployment_urns
    )
    assert any("not by lineage" in w for w in s.warnings) == bool(s.model.deployment_urns)
    assert s.schema_fields and s.features


@pytest.mark.parametrize("name", GOLDEN_FILES)
def test_loading_each_golden_file_is_fast(name: str) -> None:
    path = golden(name)
    started = time.perf_counter()
    load_mcp_file(path)
    elapsed = time.perf_counter() - started

    assert elapsed < 2.0, f"{name} took {elapsed:.3f}s"


def test_an_unchanged_file_is_decoded_once_and_an_edited_one_again(
    churn_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every collect still reads the files: a second collect decodes nothing and gives the same snapshot as a fresh
    provider; an edit (the owner renamed) is seen by the next collect."""
    import libs.datahub.file_provider as module

    decoded: list[Path] = []
    real = module.decode_mcp_text
    monkeypatch.setattr(module, "decode_mcp_text", lambda path, text: decoded.append(path) or real(path, text))
    provider = FileContextProvider([churn_file])
    first = provider.collect(C.MODEL, FETCHED_AT)
    second = provider.collect(C.MODEL, FETCHED_AT)
    assert decoded == [churn_file]
    assert (
        second == first and second.digest() == FileContextProvider([churn_file]).collect(C.MODEL, FETCHED_AT).digest()
    )
    text = churn_file.read_text()
    assert C.ML_ENGINEER in text
    churn_file.write_text(text.replace(C.ML_ENGINEER, C.ML_ENGINEER + "-renamed"))
    edited = provider.collect(C.MODEL, FETCHED_AT)
    assert decoded == [churn_file, churn_file, churn_file]  # the fresh provider's, then the edited file's
    assert (C.MODEL, C.ML_ENGINEER + "-renamed") in {(o.entity_urn, o.owner_urn) for o in edited.owners}


def test_a_warmed_provider_decodes_nothing_at_its_first_collect_and_leaves_a_bad_file_to_collect(
    churn_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import libs.datahub.file_provider as module

    decoded: list[Path] = []
    real = module.decode_mcp_text
    monkeypatch.setattr(module, "decode_mcp_text", lambda path, text: decoded.append(path) or real(path, text))
    provider = FileContextProvider([churn_file])
    assert provider.warm() == [] and decoded == [churn_file]
    warmed = provider.collect(C.MODEL, FETCHED_AT)
    assert decoded == [churn_file]  # nothing more at the first incident
    assert warmed.digest() == FileContextProvider([churn_file]).collect(C.MODEL, FETCHED_AT).digest()

    broken = tmp_path / "broken.json"
    broken.write_text('[{"aspectName": ')
    missing = tmp_path / "missing.json"
    with_problems = FileContextProvider([churn_file, broken, missing])
    problems = with_problems.warm()  # returned, not raised: the service starts
    assert [p.path for p in problems] == [broken, missing]
    with pytest.raises(MetadataFileError, match="not valid JSON"):
        with_problems.collect(C.MODEL, FETCHED_AT)  # the incident still reports it, as without the warm-up


def test_the_graph_is_built_once_per_content_of_the_files_and_again_after_an_edit(
    churn_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Building the lineage graph from every record was most of a collect once the files were decoded (17 of 18 ms
    for the bundled scenarios' files): it is built again only when a file's text changed, and every snapshot is the
    one a fresh provider gives, for each of two models read from the same graph."""
    import libs.datahub.file_provider as module

    other = tmp_path / "other.json"  # a second scenario's files, another domain's model
    other.write_text((SCENARIO_METADATA.parents[2] / "card-fraud-amount-rename/datahub/metadata.json").read_text())
    models = [C.MODEL, *_graph(other).entity_urns("mlModel")[:1]]
    assert len(models) == 2 and models[1] != C.MODEL
    built: list[int] = []
    real = module.MetadataGraph.from_records
    monkeypatch.setattr(
        module.MetadataGraph,
        "from_records",
        lambda records: built.append(1) or real(list(records)),  # type: ignore[misc]
    )
    provider = FileContextProvider([churn_file, other])
    assert provider.warm() == [] and len(built) == 1
    for _ in range(2):
        for model in models:
            assert (
                provider.collect(model, FETCHED_AT).digest()
                == FileContextProvider([churn_file, other]).collect(model, FETCHED_AT).digest()
            )
    assert len(built) == 1 + 2 * len(models)  # the fresh providers' graphs only

    text = churn_file.read_text()
    churn_file.write_text(text.replace(C.ML_ENGINEER, C.ML_ENGINEER + "-renamed"))
    edited = provider.collect(C.MODEL, FETCHED_AT)
    assert len(built) == 2 + 2 * len(models)
    assert (C.MODEL, C.ML_ENGINEER + "-renamed") in {(o.entity_urn, o.owner_urn) for o in edited.owners}
    churn_file.write_text(text)  # back to the first content: the same snapshot as at first
    assert (
        provider.collect(C.MODEL, FETCHED_AT).digest()
        == FileContextProvider([churn_file, other]).collect(C.MODEL, FETCHED_AT).digest()
    )
