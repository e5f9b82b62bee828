"""The context service's change log (in the mirror's store): the aspects a diagnosis reads are kept with their
previous value, others are not, and the log stays bounded."""

from __future__ import annotations

from libs.datahub.mcl.events import DecodedMcl
from libs.datahub.mcl.mirror_store_sqlite import SqliteMirrorStore
from services.context.change_log import ChangeLog

DATASET = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.customers,PROD)"


def _mcl(aspect: str, previous: dict | None, current: dict | None, time_ms: int = 1741600000000) -> DecodedMcl:
    return DecodedMcl(
        entity_type="dataset",
        urn=DATASET,
        change_type="UPSERT",
        aspect_name=aspect,
        aspect_json=current,
        previous_aspect_json=previous,
        created_time_millis=time_ms,
        created_actor="urn:li:corpuser:etl",
    )


def test_a_schema_change_is_kept_with_both_versions() -> None:
    log = ChangeLog(SqliteMirrorStore.in_memory())
    assert log.record(_mcl("schemaMetadata", {"fields": [{"fieldPath": "age"}]}, {"fields": [{"fieldPath": "tenure"}]}))
    (change,) = log.recent()
    assert change.previous == {"fields": [{"fieldPath": "age"}]}
    assert change.current == {"fields": [{"fieldPath": "tenure"}]}
    assert change.changed_at == "2025-03-10T09:46:40+00:00" and change.actor == "urn:li:corpuser:etl"


def test_aspects_a_diagnosis_does_not_read_are_not_kept() -> None:
    log = ChangeLog(SqliteMirrorStore.in_memory())
    assert not log.record(_mcl("browsePathsV2", None, {"path": []}))
    assert log.recent() == []


def test_the_log_keeps_only_the_newest_rows() -> None:
    log = ChangeLog(SqliteMirrorStore.in_memory(max_changes=3))
    for step in range(5):
        log.record(_mcl("datasetProfile", None, {"rowCount": step}, time_ms=1741600000000 + step))
    assert [change.current["rowCount"] for change in log.recent()] == [2, 3, 4]
