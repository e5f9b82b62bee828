"""The metadata mirror: bootstrap, applying MCLs (upsert, delete, soft delete), persistence across a reload."""

from __future__ import annotations

from pathlib import Path

from datahub.metadata.schema_classes import (
    AssertionResultClass,
    AssertionResultTypeClass,
    AssertionRunEventClass,
    AssertionRunStatusClass,
    DatasetKeyClass,
    MLModelPropertiesClass,
    OwnerClass,
    OwnershipClass,
    OwnershipTypeClass,
    StatusClass,
    UpstreamClass,
    UpstreamLineageClass,
)

from libs.datahub.graph import MetadataGraph
from libs.datahub.mcl.impact import Impact
from libs.datahub.mcl.mirror import MetadataMirror
from tests.unit.mcl.mcl_test_inputs import Churn, churn_mirror, churn_records, decoded, mcl_record

NEW_SOURCE = "urn:li:dataset:(urn:li:dataPlatform:postgres,billing.public.accounts,PROD)"


def _models(mirror: MetadataMirror, urn: str) -> list[str]:
    return [impact.model_urn for impact in mirror.impacted_models(urn)]


def _run(result: str, millis: int) -> AssertionRunEventClass:
    return AssertionRunEventClass(
        timestampMillis=millis,
        runId=f"run-{millis}",
        asserteeUrn=Churn.RAW,
        assertionUrn=Churn.ASSERTION,
        status=AssertionRunStatusClass.COMPLETE,
        result=AssertionResultClass(type=result),
    )


def test_a_bootstrapped_mirror_traces_the_raw_dataset_down_to_the_model_its_deployment_and_owners() -> None:
    mirror = MetadataMirror.in_memory()
    assert mirror.needs_bootstrap

    mirror.bootstrap(churn_records(), source="file:churn")

    assert not mirror.needs_bootstrap and mirror.bootstrapped_from == "file:churn"
    assert mirror.impacted_models(Churn.RAW) == [
        Impact(
            model_urn=Churn.MODEL,
            deployments=(Churn.DEPLOYMENT,),
            owners=Churn.MODEL_OWNERS,
            path=(Churn.RAW, Churn.FEATURES, Churn.ACCOUNT_AGE, Churn.MODEL),
            precision="entity",
        )
    ]
    assert set(mirror.downstream_of(Churn.RAW)) == {Churn.FEATURES, Churn.FEATURE_JOB}
    assert _models(mirror, Churn.MODEL) == [] and _models(mirror, Churn.UNRELATED) == []


def test_bootstrap_from_a_metadata_graph_matches_bootstrap_from_records() -> None:
    from_graph = MetadataMirror.in_memory()
    from_graph.bootstrap_from_graph(MetadataGraph.from_records(churn_records()), source="graph")

    assert from_graph.impacted_models(Churn.RAW) == churn_mirror().impacted_models(Churn.RAW)
    assert from_graph.aspect(Churn.ASSERTION, "assertionRunEvent") is not None


def test_an_upsert_replaces_the_aspect_and_exactly_the_edges_it_declared() -> None:
    mirror = churn_mirror()
    lineage = UpstreamLineageClass(upstreams=[UpstreamClass(dataset=NEW_SOURCE, type="TRANSFORMED")])

    mirror.apply(decoded(mcl_record(Churn.FEATURES, "upstreamLineage", lineage)))

    assert _models(mirror, NEW_SOURCE) == [Churn.MODEL]
    assert mirror.aspect(Churn.FEATURES, "upstreamLineage") == lineage
    # The raw dataset's edge to the features dataset was declared by that upstreamLineage: it is gone; the
    # feature job declares its own edges, so the raw dataset still reaches the model through the job.
    assert set(mirror.downstream_of(Churn.RAW)) == {Churn.FEATURE_JOB}
    assert [impact.path for impact in mirror.impacted_models(Churn.RAW)] == [
        (Churn.RAW, Churn.FEATURE_JOB, Churn.FEATURES, Churn.ACCOUNT_AGE, Churn.MODEL)
    ]


def test_deployments_and_owners_follow_the_model_s_latest_aspects() -> None:
    mirror = churn_mirror()
    properties = mirror.aspect(Churn.MODEL, "mlModelProperties")
    assert isinstance(properties, MLModelPropertiesClass)
    properties.deployments = []
    owners = OwnershipClass(owners=[OwnerClass(owner="urn:li:corpuser:oncall", type=OwnershipTypeClass.DATAOWNER)])

    mirror.apply(decoded(mcl_record(Churn.MODEL, "mlModelProperties", properties)))
    mirror.apply(decoded(mcl_record(Churn.MODEL, "ownership", owners)))

    (impact,) = mirror.impacted_models(Churn.RAW)
    assert impact.deployments == () and impact.owners == ("urn:li:corpuser:oncall",)


def test_a_soft_deleted_model_is_no_longer_impacted_and_comes_back_when_restored() -> None:
    mirror = churn_mirror()

    mirror.apply(decoded(mcl_record(Churn.MODEL, "status", StatusClass(removed=True))))
    assert _models(mirror, Churn.RAW) == [] and mirror.is_removed(Churn.MODEL)

    mirror.apply(decoded(mcl_record(Churn.MODEL, "status", StatusClass(removed=False))))
    assert _models(mirror, Churn.RAW) == [Churn.MODEL]


def test_deleting_an_aspect_or_the_whole_entity_removes_what_it_declared() -> None:
    mirror = churn_mirror()
    previous = mirror.aspect(Churn.MODEL, "mlModelProperties")

    mirror.apply(decoded(mcl_record(Churn.MODEL, "mlModelProperties", None, previous, change_type="DELETE")))
    assert _models(mirror, Churn.RAW) == []
    assert mirror.aspect(Churn.MODEL, "mlModelProperties") is None and mirror.deployments_of(Churn.MODEL) == ()

    mirror.apply(
        decoded(
            mcl_record(
                Churn.FEATURES,
                "datasetKey",
                None,
                DatasetKeyClass(
                    platform="urn:li:dataPlatform:snowflake", name="analytics.ml.churn_features", origin="PROD"
                ),
                change_type="DELETE",
            )
        )
    )
    mirror.flush()
    assert mirror.aspect(Churn.FEATURES, "schemaMetadata") is None
    assert Churn.FEATURES not in mirror.downstream_of(Churn.RAW)  # the raw dataset's edge was declared by features


def test_a_timeseries_aspect_keeps_the_newest_run() -> None:
    mirror = churn_mirror()

    mirror.apply(
        decoded(
            mcl_record(Churn.ASSERTION, "assertionRunEvent", _run(AssertionResultTypeClass.FAILURE, 2_000_000_000_000))
        )
    )
    mirror.apply(
        decoded(mcl_record(Churn.ASSERTION, "assertionRunEvent", _run(AssertionResultTypeClass.SUCCESS, 1_000)))
    )

    latest = mirror.aspect(Churn.ASSERTION, "assertionRunEvent")
    assert isinstance(latest, AssertionRunEventClass) and latest.result.type == AssertionResultTypeClass.FAILURE


def test_a_reopened_mirror_has_the_same_graph_aspects_and_offsets_without_a_bootstrap(tmp_path: Path) -> None:
    mirror = MetadataMirror.open(tmp_path)
    mirror.bootstrap(churn_records(), source="file:churn")
    mirror.apply(decoded(mcl_record(Churn.MODEL, "status", StatusClass(removed=False))))
    mirror.flush(offsets={("MetadataChangeLog_Versioned_v1", 0): 42})
    before = mirror.impacted_models(Churn.RAW)
    mirror.close()

    reopened = MetadataMirror.open(tmp_path / "mirror.sqlite")

    assert not reopened.needs_bootstrap and reopened.bootstrapped_from == "file:churn"
    assert reopened.committed_offsets() == {("MetadataChangeLog_Versioned_v1", 0): 42}
    assert reopened.impacted_models(Churn.RAW) == before
    assert reopened.aspect(Churn.MODEL, "status") == StatusClass(removed=False)
    assert reopened.load_warnings == []
    reopened.close()


def test_pending_changes_are_read_back_before_a_flush_persists_them(tmp_path: Path) -> None:
    mirror = MetadataMirror.open(tmp_path)
    mirror.bootstrap(churn_records(), source="file:churn")
    mirror.apply(decoded(mcl_record(Churn.MODEL, "status", StatusClass(removed=True))))

    assert mirror.aspect(Churn.MODEL, "status") == StatusClass(removed=True)
    assert MetadataMirror.open(tmp_path).aspect(Churn.MODEL, "status") is None  # another reader: not yet flushed
