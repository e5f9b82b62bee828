"""Multi-hop lineage walks and the model -> deployment links on a churn-shaped graph."""

from __future__ import annotations

from pathlib import Path

import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.ingestion.sink.file import write_metadata_file
from datahub.metadata.schema_classes import UpstreamClass, UpstreamLineageClass

from libs.datahub.graph import MetadataGraph
from libs.datahub.lineage import deployments_of, walk_downstream, walk_upstream
from libs.datahub.mcp_file import load_mcp_file
from tests.unit.datahub.datahub_test_inputs import Churn, golden, write_churn_metadata

C = Churn
VIA_TRAINING_JOB = (C.RAW, C.FEATURE_JOB, C.FEATURE_DATASET, C.TRAINING_JOB, C.MODEL)


def _via_feature(feature: str) -> tuple[str, ...]:
    return (C.RAW, C.FEATURE_JOB, C.FEATURE_DATASET, C.TRAINING_JOB, C.TRAINING_DATASET, feature, C.MODEL)


@pytest.fixture
def churn_graph(tmp_path: Path) -> MetadataGraph:
    return MetadataGraph.from_records(load_mcp_file(write_churn_metadata(tmp_path)).records)


def test_upstream_walk_goes_from_the_model_back_to_the_raw_dataset(churn_graph: MetadataGraph) -> None:
    paths = walk_upstream(churn_graph, C.MODEL)

    assert sorted(p.urns for p in paths) == sorted(
        [VIA_TRAINING_JOB, _via_feature(C.MONTHLY_SPEND), _via_feature(C.TENURE)]
    )
    assert all(p.direction == "upstream" and p.stop_reason == "root" and p.via_lineage for p in paths)
    by_urns = {p.urns: p.relationships for p in paths}
    assert by_urns[VIA_TRAINING_JOB] == ("Consumes", "Produces", "Consumes", "TrainedBy")
    assert by_urns[_via_feature(C.TENURE)] == (
        "Consumes",
        "Produces",
        "Consumes",
        "Produces",
        "DerivedFrom",
        "Consumes",
    )


def test_downstream_walk_from_the_raw_dataset_reaches_the_model_and_its_group(churn_graph: MetadataGraph) -> None:
    paths = walk_downstream(churn_graph, C.RAW)

    assert {p.urns[-2:] for p in paths} == {(C.MODEL, C.GROUP)}
    assert all(p.urns[0] == C.RAW and p.stop_reason == "leaf" for p in paths)
    assert {p.urns for p in paths} == {
        (*VIA_TRAINING_JOB, C.GROUP),
        *((*_via_feature(f), C.GROUP) for f in (C.MONTHLY_SPEND, C.TENURE)),
    }


def test_deployments_come_from_model_properties_with_a_warning(churn_graph: MetadataGraph) -> None:
    links = deployments_of(churn_graph, C.MODEL)

    assert links.deployment_urns == (C.DEPLOYMENT,)
    (path,) = links.paths
    assert (path.direction, path.urns, path.relationships, path.via_lineage) == (
        "deployment",
        (C.MODEL, C.DEPLOYMENT),
        ("DeployedTo",),
        False,
    )
    (warning,) = links.warnings
    assert "mlModelProperties.deployments" in warning and "not by lineage" in warning
    assert all(C.DEPLOYMENT not in p.urns for p in walk_downstream(churn_graph, C.MODEL))


def test_dangling_deployment_references_are_reported() -> None:
    graph = MetadataGraph.from_records(load_mcp_file(golden("sagemaker_mces_golden.json")).records)

    links = deployments_of(graph, "urn:li:mlModel:(urn:li:dataPlatform:sagemaker,the-first-model,PROD)")

    assert [u.split(",")[1] for u in links.deployment_urns] == [
        "arn:aws:sagemaker:us-west-2:123412341234:endpoint/the-first-endpoint"
    ]
    assert any("dangling reference" in w for w in links.warnings)


def test_max_hops_cuts_paths_and_says_so(churn_graph: MetadataGraph) -> None:
    paths = walk_upstream(churn_graph, C.MODEL, max_hops=2)

    assert paths and all(p.stop_reason == "max_hops" and len(p.relationships) == 2 for p in paths)
    assert all(p.urns[-1] == C.MODEL for p in paths)


def test_max_paths_bounds_the_walk(churn_graph: MetadataGraph) -> None:
    assert len(walk_upstream(churn_graph, C.MODEL, max_paths=1)) == 1


def test_cycles_end_a_path_instead_of_looping(tmp_path: Path) -> None:
    a, b = (f"urn:li:dataset:(urn:li:dataPlatform:hive,db.{name},PROD)" for name in ("a", "b"))
    path = tmp_path / "cycle.json"
    write_metadata_file(
        path,
        [
            MetadataChangeProposalWrapper(entityUrn=a, aspect=UpstreamLineageClass([UpstreamClass(b, "COPY")])),
            MetadataChangeProposalWrapper(entityUrn=b, aspect=UpstreamLineageClass([UpstreamClass(a, "COPY")])),
        ],
    )
    graph = MetadataGraph.from_records(load_mcp_file(path).records)

    (found,) = walk_upstream(graph, a)

    assert (found.urns, found.stop_reason) == ((b, a), "cycle")


def test_an_entity_without_lineage_has_no_paths(churn_graph: MetadataGraph) -> None:
    assert walk_upstream(churn_graph, C.RAW) == []
    assert walk_downstream(churn_graph, C.GROUP) == []
