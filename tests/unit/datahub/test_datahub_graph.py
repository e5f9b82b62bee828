"""The in-memory metadata graph: latest aspects, timeseries order, and lineage direction semantics."""

from __future__ import annotations

from pathlib import Path

from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.ingestion.sink.file import write_metadata_file
from datahub.metadata.schema_classes import (
    AssertionResultClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
    BaseDataClass,
    DatasetPropertiesClass,
    EvaluationDataClass,
    TrainingDataClass,
    UpstreamClass,
    UpstreamLineageClass,
)

from libs.datahub.graph import MetadataGraph
from libs.datahub.mcp_file import load_mcp_file
from tests.unit.datahub.datahub_test_inputs import Churn, golden, write_churn_metadata

ATHENA_COSTS = "urn:li:dataset:(urn:li:dataPlatform:athena,athena_db.costs,PROD)"
ATHENA_PROCESSED = "urn:li:dataset:(urn:li:dataPlatform:athena,athena_db.processed_costs,PROD)"
ATHENA_JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,athena_operator,prod),transform_cost_table)"
SAGEMAKER_MODEL = "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-second-model,PROD)"
T1 = "urn:li:dataset:(urn:li:dataPlatform:hive,db.t1,PROD)"
T2 = "urn:li:dataset:(urn:li:dataPlatform:hive,db.t2,PROD)"
T3 = "urn:li:dataset:(urn:li:dataPlatform:hive,db.t3,PROD)"


def _graph(*paths: Path) -> MetadataGraph:
    return MetadataGraph.from_records(record for path in paths for record in load_mcp_file(path).records)


def _urns(hops: tuple) -> set[str]:
    return {hop.urn for hop in hops}


def test_the_latest_versioned_aspect_wins_and_its_edges_replace_the_old_ones(tmp_path: Path) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    write_metadata_file(
        first,
        [
            MetadataChangeProposalWrapper(entityUrn=T3, aspect=DatasetPropertiesClass(name="old")),
            MetadataChangeProposalWrapper(
                entityUrn=T3, aspect=UpstreamLineageClass(upstreams=[UpstreamClass(dataset=T1, type="COPY")])
            ),
        ],
    )
    write_metadata_file(
        second,
        [
            MetadataChangeProposalWrapper(entityUrn=T3, aspect=DatasetPropertiesClass(name="new")),
            MetadataChangeProposalWrapper(
                entityUrn=T3, aspect=UpstreamLineageClass(upstreams=[UpstreamClass(dataset=T2, type="COPY")])
            ),
        ],
    )

    graph = _graph(first, second)

    assert graph.aspect_value(T3, "datasetProperties").name == "new"
    assert graph.aspect(T3, "datasetProperties").location == str(second)
    assert _urns(graph.upstream_of(T3)) == {T2}
    assert graph.in_edges(T1) == ()


def test_timeseries_records_are_all_kept_oldest_first(tmp_path: Path) -> None:
    path = tmp_path / "runs.json"
    assertion = "urn:li:assertion:a1"
    runs = [
        AssertionRunEventClass(
            timestampMillis=millis,
            runId=str(millis),
            asserteeUrn=T1,
            assertionUrn=assertion,
            status=AssertionRunStatusClass.COMPLETE,
            result=AssertionResultClass(type=result),
        )
        for millis, result in [(300, "FAILURE"), (100, "SUCCESS"), (200, "SUCCESS")]
    ]
    write_metadata_file(path, [MetadataChangeProposalWrapper(entityUrn=assertion, aspect=run) for run in runs])

    graph = _graph(path)

    assert [r.aspect.timestampMillis for r in graph.timeseries(assertion, "assertionRunEvent")] == [100, 200, 300]
    assert graph.aspect(assertion, "assertionRunEvent") is None
    assert graph.aspect_names(assertion) == ("assertionRunEvent",)


def test_a_job_consumes_upstream_and_produces_downstream() -> None:
    graph = _graph(golden("airflow_v2_athena_operator.json"))

    assert _urns(graph.upstream_of(ATHENA_JOB)) == {ATHENA_COSTS}
    assert ATHENA_PROCESSED in _urns(graph.downstream_of(ATHENA_JOB))
    assert _urns(graph.upstream_of(ATHENA_PROCESSED)) == {ATHENA_JOB}
    assert _urns(graph.downstream_of(ATHENA_COSTS)) == {ATHENA_JOB}
    produced = [e for e in graph.in_edges(ATHENA_PROCESSED, "Produces") if e.is_lineage]
    assert [(e.source, e.destination_is_upstream) for e in produced] == [(ATHENA_JOB, False)]
    # The run (dataProcessInstanceOutput.outputs) also "Produces" it, but that annotation is not lineage.
    run_outputs = [e for e in graph.in_edges(ATHENA_PROCESSED, "Produces") if not e.is_lineage]
    assert [graph.entity_type(e.source) for e in run_outputs] == ["dataProcessInstance"]


def test_upstream_lineage_points_from_the_downstream_dataset() -> None:
    graph = _graph(golden("sql-queries_lazy-schema-loading.json"))
    audit_log = "urn:li:dataset:(urn:li:dataPlatform:snowflake,snowflake.db.audit_log,PROD)"
    sessions = "urn:li:dataset:(urn:li:dataPlatform:snowflake,snowflake.db.sessions,PROD)"

    assert _urns(graph.upstream_of(audit_log)) == {sessions}
    assert _urns(graph.downstream_of(sessions)) == {audit_log}
    assert [e.relationship for e in graph.out_edges(audit_log) if e.is_lineage] == ["DownstreamOf"]
    assert len(graph.field_edges) == 1


def test_model_lineage_neighbours_and_deployments_are_not_lineage() -> None:
    graph = _graph(golden("sagemaker_mces_golden.json"))

    upstream = _urns(graph.upstream_of(SAGEMAKER_MODEL))
    downstream = _urns(graph.downstream_of(SAGEMAKER_MODEL))

    assert {u.split(",")[1] for u in upstream} == {"training:a-training-job"}
    assert {u.split(",")[1] for u in downstream} == {
        "a-model-package-group",
        "edge_packaging:an-edge-packaging-job",
        "transform:a-transform-job",
    }
    deployed = graph.out_edges(SAGEMAKER_MODEL, "DeployedTo")
    assert len(deployed) == 1 and not deployed[0].is_lineage
    assert deployed[0].destination not in upstream | downstream


def test_a_job_listing_itself_as_input_is_not_its_own_neighbour() -> None:
    graph = _graph(golden("sagemaker_mces_golden.json"))
    job = next(u for u in graph.entity_urns("dataJob") if "compilation-job" in u)

    assert any(e.destination == job for e in graph.out_edges(job, "DownstreamOf"))
    assert job not in _urns(graph.upstream_of(job)) | _urns(graph.downstream_of(job))


def test_features_derive_from_datasets_and_tables_contain_features(tmp_path: Path) -> None:
    graph = _graph(write_churn_metadata(tmp_path))

    assert _urns(graph.upstream_of(Churn.MONTHLY_SPEND)) == {Churn.TRAINING_DATASET}
    assert Churn.MONTHLY_SPEND in _urns(graph.downstream_of(Churn.TRAINING_DATASET))
    assert [e.source for e in graph.in_edges(Churn.MONTHLY_SPEND, "Contains")] == [Churn.FEATURE_TABLE]
    assert _urns(graph.upstream_of(Churn.MODEL)) == {Churn.TRAINING_JOB, Churn.MONTHLY_SPEND, Churn.TENURE}
    assert _urns(graph.downstream_of(Churn.MODEL)) == {Churn.GROUP}
    assert graph.entity_type(Churn.FEATURE_TABLE) == "mlFeatureTable"
    assert not graph.has_metadata("urn:li:corpuser:nobody")


def test_a_models_declared_training_datasets_are_upstream_of_it_and_its_evaluation_data_is_not(
    tmp_path: Path,
) -> None:
    model = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,escalation-risk,PROD)"
    path = tmp_path / "model.json"
    write_metadata_file(
        path,
        [
            MetadataChangeProposalWrapper(
                entityUrn=model,
                aspect=TrainingDataClass(trainingData=[BaseDataClass(dataset=T1), BaseDataClass(dataset=T1)]),
            ),
            MetadataChangeProposalWrapper(
                entityUrn=model, aspect=EvaluationDataClass(evaluationData=[BaseDataClass(dataset=T2)])
            ),
            MetadataChangeProposalWrapper(
                entityUrn=T1, aspect=UpstreamLineageClass(upstreams=[UpstreamClass(dataset=T3, type="TRANSFORMED")])
            ),
        ],
    )
    graph = _graph(path)
    [hop] = graph.upstream_of(model)
    assert (hop.urn, hop.edge.relationship, hop.edge.declared_in) == (
        T1,
        "TrainedOn",
        "mlModelTrainingData.trainingData[].dataset",
    )
    assert _urns(graph.downstream_of(T1)) == {model}
    assert _urns(graph.upstream_of(T1)) == {T3}
