"""The metadata mirror on PostgreSQL, shared by two replicas of the context service's MCL intake: each owns one
partition, each sees what the other wrote (lineage, the change log, the counts), state and offsets commit
together, and a replica that dies before settling leaves nothing behind."""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from datahub.metadata.schema_classes import (
    MLFeaturePropertiesClass,
    MLModelPropertiesClass,
    OwnerClass,
    OwnershipClass,
    OwnershipTypeClass,
    SchemaMetadataClass,
    StatusClass,
)

from libs.bus.external_input import ExternalRecord, InputPosition
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_store_postgres import PostgresMirrorStore
from libs.datahub.mcl.schema_registry import ShippedSchemaResolver
from services.context.change_log import ChangeLog
from services.context.mcl_intake import MclIntake
from tests.support.postgres import fresh_schema, libpq_url, postgres_server
from tests.unit.mcl.mcl_test_inputs import Churn, avro_message, churn_records, mcl_record, without_column

pytestmark = pytest.mark.postgres

TOPIC = "MetadataChangeLog_Versioned_v1"
FEATURE = "urn:li:mlFeature:(replica_features,spend)"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,replica-model,PROD)"
DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,replica-endpoint,PROD)"


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture
def state_url(server_url: str) -> Iterator[str]:
    with fresh_schema(server_url) as url:
        yield url


def _replica(state_url: str) -> MclIntake:
    return MclIntake(MclDecoder(ShippedSchemaResolver()), MetadataMirror(PostgresMirrorStore(state_url)))


def _records(partition: int, raws: list[bytes], first_offset: int = 0) -> list[ExternalRecord]:
    return [ExternalRecord(InputPosition(TOPIC, partition, first_offset + i), raw) for i, raw in enumerate(raws)]


def _schema() -> SchemaMetadataClass:
    schema = next(r.aspect for r in churn_records() if r.urn == Churn.RAW and r.aspect_name == "schemaMetadata")
    assert isinstance(schema, SchemaMetadataClass)
    return schema


def _model_downstream_of_the_raw_dataset() -> list[bytes]:
    owners = OwnershipClass(owners=[OwnerClass(owner="urn:li:corpuser:ana", type=OwnershipTypeClass.TECHNICAL_OWNER)])
    return [
        avro_message(mcl_record(FEATURE, "mlFeatureProperties", MLFeaturePropertiesClass(sources=[Churn.RAW]))),
        avro_message(
            mcl_record(
                MODEL, "mlModelProperties", MLModelPropertiesClass(mlFeatures=[FEATURE], deployments=[DEPLOYMENT])
            )
        ),
        avro_message(mcl_record(MODEL, "ownership", owners)),
    ]


def test_two_replicas_share_one_mirror_each_sees_the_other_s_lineage_counts_and_change_log(state_url: str) -> None:
    first, second = _replica(state_url), _replica(state_url)
    schema = _schema()

    settled = first.handle_batch(_records(0, _model_downstream_of_the_raw_dataset()))
    first.settle_batch(settled.verdicts)
    column = schema.fields[0].fieldPath
    change = avro_message(mcl_record(Churn.RAW, "schemaMetadata", without_column(schema, column), schema))
    result = second.handle_batch(
        _records(1, [change, avro_message(mcl_record(FEATURE, "status", StatusClass(removed=True)))])
    )
    second.settle_batch(result.verdicts)

    (risk,) = [first for verdict in result.verdicts for first in verdict.firsts]  # the second saw the first's lineage
    assert [affected.model_urn for affected in risk.payload.affected] == [MODEL]  # type: ignore[attr-defined]
    assert [impact.model_urn for impact in first.mirror.impact_report(Churn.RAW).impacts] == [MODEL]
    assert first.mirror.follow_feed() == 1  # the second soft-deleted the feature: the first's index follows
    assert first.mirror.is_removed(FEATURE) and first.mirror.impact_report(Churn.RAW).impacts == ()
    assert first.mirror.committed_offsets() == second.mirror.committed_offsets() == {(TOPIC, 0): 3, (TOPIC, 1): 2}
    assert first.mirror.store.counters() == {"applied": 5}
    schema_changes = [c for c in ChangeLog(first.mirror.store).recent() if c.aspect == "schemaMetadata"]
    assert len(schema_changes) == 1 and schema_changes[0].previous is not None
    assert second.mirror.store.seen(risk.payload.change_fingerprint)  # type: ignore[attr-defined]
    again = second.handle_batch(_records(1, [change], first_offset=2))
    assert [verdict.firsts for verdict in again.verdicts] == [()]  # reported once


def test_a_replica_that_dies_before_settling_leaves_nothing_and_the_records_count_once_when_they_come_again(
    state_url: str,
) -> None:
    raws = _model_downstream_of_the_raw_dataset()
    doomed = _replica(state_url)
    doomed.handle_batch(_records(0, raws))  # applied in memory, then the process dies: nothing settled
    doomed.mirror.store.close()

    survivor = _replica(state_url)
    assert survivor.stored_offsets() == {} and survivor.mirror.aspect_json(MODEL, "mlModelProperties") is None
    assert survivor.mirror.impact_report(Churn.RAW).impacts == ()
    result = survivor.handle_batch(_records(0, raws))
    survivor.settle_batch(result.verdicts)

    reopened = MetadataMirror(PostgresMirrorStore(state_url))
    assert reopened.committed_offsets() == {(TOPIC, 0): 3} and reopened.store.counters() == {"applied": 3}
    assert [impact.model_urn for impact in reopened.impact_report(Churn.RAW).impacts] == [MODEL]
    with psycopg.connect(libpq_url(state_url)) as connection:
        tables = {
            row[0]
            for row in connection.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE 'context_mirror_%'")
        }
    assert {"context_mirror_aspects", "context_mirror_offsets", "context_mirror_feed"} <= tables
