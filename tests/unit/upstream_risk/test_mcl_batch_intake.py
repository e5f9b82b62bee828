"""The MCL intake's batch path: one verdict per record in order, nothing committed before the batch settles, then
state, counts, change log and each partition's offset together; a registry outage stops the batch at its record;
a bug met in one record dead-letters that record only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from datahub.metadata.schema_classes import SchemaMetadataClass, StatusClass

from libs.bus.external_input import DeadLetterVerdict, ExternalRecord, InputPosition, RecordVerdict
from libs.datahub.mcl.aspect_decode import TypedAspect, decode_aspect
from libs.datahub.mcl.avro_schema import ParsedSchema, shipped_mcl_schema
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_store import MirrorWrite
from libs.datahub.mcl.mirror_store_sqlite import SqliteMirrorStore
from libs.datahub.mcl.schema_registry import SchemaRegistryUnavailable, ShippedSchemaResolver
from services.context.change_log import ChangeLog
from services.context.intake_counts import IntakeCounts
from services.context.mcl_intake import MclIntake
from tests.support.mcl_poison import poison_cases
from tests.unit.mcl.mcl_test_inputs import Churn, avro_message, churn_records, mcl_record, without_column

TOPIC = "MetadataChangeLog_Versioned_v1"
CASES = {case.name: case for case in poison_cases()}


def _churn_intake(folder: Path, decoder: MclDecoder | None = None) -> MclIntake:
    mirror = MetadataMirror.open(folder)
    mirror.bootstrap(churn_records(), source="test")
    return MclIntake(decoder or MclDecoder(ShippedSchemaResolver()), mirror)


def _schema() -> SchemaMetadataClass:
    schema = next(r.aspect for r in churn_records() if r.urn == Churn.RAW and r.aspect_name == "schemaMetadata")
    assert isinstance(schema, SchemaMetadataClass)
    return schema


def _rename() -> bytes:
    schema = _schema()
    return avro_message(
        mcl_record(Churn.RAW, "schemaMetadata", without_column(schema, schema.fields[0].fieldPath), schema)
    )


def _batch(*raws: bytes, partition: int = 0, first: int = 0) -> list[ExternalRecord]:
    return [ExternalRecord(InputPosition(TOPIC, partition, first + i), raw) for i, raw in enumerate(raws)]


def test_a_batch_gets_one_verdict_per_record_and_commits_only_when_it_settles(tmp_path: Path) -> None:
    intake = _churn_intake(tmp_path)
    status = avro_message(mcl_record(Churn.FEATURES, "status", StatusClass(removed=False)))
    records = [
        *_batch(_rename(), CASES["bad-magic"].raw, CASES["valid-irrelevant-properties"].raw, partition=0),
        *_batch(status, partition=2, first=40),
    ]

    result = intake.handle_batch(records)

    assert result.stopped is None and [v.record for v in result.verdicts] == records
    risk, bad, skipped, applied = result.verdicts
    assert len(risk.firsts) == 1 and risk.dead_letter is None
    assert bad.dead_letter is not None and bad.dead_letter.reason == "mcl-bad-magic"
    assert skipped.firsts == () and skipped.dead_letter is None and applied.dead_letter is None
    before = MetadataMirror.open(tmp_path)
    assert before.committed_offsets() == {} and before.store.counters() == {}  # nothing committed yet
    assert ChangeLog(before.store).recent() == []

    intake.settle_batch(result.verdicts)

    after = MetadataMirror.open(tmp_path)
    assert after.committed_offsets() == {(TOPIC, 0): 3, (TOPIC, 2): 41}
    counts = IntakeCounts.from_counters(after.store.counters())
    assert (counts.applied, dict(counts.skipped), dict(counts.dead_lettered)) == (
        2,
        {"aspect-not-mirrored": 1},
        {"mcl-bad-magic": 1},
    )
    assert [change.aspect for change in ChangeLog(after.store).recent()] == ["schemaMetadata"]
    assert after.store.seen(risk.firsts[0].payload.change_fingerprint)  # type: ignore[attr-defined]


def test_the_same_change_twice_in_one_batch_is_reported_once(tmp_path: Path) -> None:
    intake = _churn_intake(tmp_path)
    result = intake.handle_batch(_batch(_rename(), _rename()))
    assert [len(verdict.firsts) for verdict in result.verdicts] == [1, 0]


class _RegistryAwayFor:
    """The shipped schema, except that asking for ``schema_id`` meets an unreachable registry."""

    def __init__(self, schema_id: int) -> None:
        self.schema_id = schema_id

    def resolve(self, schema_id: int) -> ParsedSchema:
        if schema_id == self.schema_id:
            raise SchemaRegistryUnavailable("GET /schemas/ids/77: connection refused")
        return shipped_mcl_schema()


def test_a_registry_outage_stops_the_batch_at_its_record_and_only_the_records_before_it_settle(tmp_path: Path) -> None:
    intake = _churn_intake(tmp_path, MclDecoder(_RegistryAwayFor(77)))
    ok = avro_message(mcl_record(Churn.FEATURES, "status", StatusClass(removed=False)))
    needs_registry = b"\x00" + (77).to_bytes(4, "big") + ok[5:]
    records = _batch(ok, ok, needs_registry, ok)

    result = intake.handle_batch(records)

    assert result.stopped is not None and result.stopped.record == records[2]
    assert "connection refused" in str(result.stopped.failure) and len(result.verdicts) == 2
    intake.settle_batch(result.verdicts)
    assert intake.stored_offsets() == {(TOPIC, 0): 2} and intake.counts.total == 2
    given_up = RecordVerdict(records[2], dead_letter=DeadLetterVerdict("retries-exhausted", "failed 5 times"))
    intake.settle_batch([given_up])  # what the runtime settles after delivery.max_attempts
    assert intake.stored_offsets() == {(TOPIC, 0): 3}
    assert intake.counts.dead_lettered == {"retries-exhausted": 1} and intake.counts.total == 3


def test_a_bug_met_in_one_record_dead_letters_that_record_and_the_batch_goes_on(tmp_path: Path) -> None:
    def failing_on_ownership(aspect_name: str, aspect_json: dict[str, Any]) -> TypedAspect:
        if aspect_name == "ownership":
            raise RuntimeError("a bug")
        return decode_aspect(aspect_name, aspect_json)

    intake = _churn_intake(tmp_path, MclDecoder(ShippedSchemaResolver(), aspect_decoder=failing_on_ownership))
    odd_owner = {"owners": [{"owner": "urn:li:corpuser:ana", "type": "DATAOWNER", "fromTheFuture": 1}]}
    ownership = avro_message(mcl_record(Churn.RAW, "ownership", odd_owner))  # not certain: the (failing) SDK route
    status = avro_message(mcl_record(Churn.FEATURES, "status", StatusClass(removed=True)))

    result = intake.handle_batch(_batch(ownership, status))
    intake.settle_batch(result.verdicts)

    failed, applied = result.verdicts
    assert failed.dead_letter is not None and failed.dead_letter.reason == "handler-error"
    assert "RuntimeError: a bug" in failed.dead_letter.detail and applied.dead_letter is None
    assert intake.counts.applied == 1 and intake.counts.dead_lettered == {"handler-error": 1}
    assert intake.mirror.is_removed(Churn.FEATURES) and intake.mirror.aspect_json(Churn.RAW, "ownership") != odd_owner


def test_a_batch_handled_while_the_one_before_commits_reads_its_state_and_reports_no_risk_twice(
    tmp_path: Path,
) -> None:
    intake = _churn_intake(tmp_path)
    first = intake.handle_batch(_batch(_rename()))
    commit = intake.begin_settle(first.verdicts)  # taken aside, not written yet
    renamed = intake.mirror.aspect_json(Churn.RAW, "schemaMetadata")
    assert MetadataMirror.open(tmp_path).committed_offsets() == {}  # nothing stored yet

    second = intake.handle_batch(_batch(_rename(), first=1))

    assert [len(v.firsts) for v in first.verdicts] == [1] and [len(v.firsts) for v in second.verdicts] == [0]
    assert intake.mirror.aspect_json(Churn.RAW, "schemaMetadata") == renamed  # read from what is in flight
    with pytest.raises(RuntimeError, match="in flight"):
        intake.begin_settle(second.verdicts)
    commit()
    intake.begin_settle(second.verdicts)()
    stored = MetadataMirror.open(tmp_path)
    assert stored.committed_offsets() == {(TOPIC, 0): 2} and stored.aspect_json(Churn.RAW, "schemaMetadata") == renamed
    counts = IntakeCounts.from_counters(stored.store.counters())
    assert counts.applied == 2 and intake.counts == counts


class _FullDisk(SqliteMirrorStore):
    """SQLite whose writes fail while ``full`` is set."""

    full = False

    def write(self, batch: MirrorWrite) -> None:
        if self.full:
            raise OSError("database or disk is full")
        super().write(batch)


def test_after_a_failed_commit_reload_drops_what_the_store_does_not_hold(tmp_path: Path) -> None:
    store = _FullDisk.open(tmp_path)
    assert isinstance(store, _FullDisk)
    intake = MclIntake(MclDecoder(ShippedSchemaResolver()), MetadataMirror(store))
    intake.mirror.bootstrap(churn_records(), source="test")
    before = intake.mirror.aspect_json(Churn.RAW, "schemaMetadata")
    first = intake.handle_batch(_batch(_rename()))
    commit = intake.begin_settle(first.verdicts)
    status = avro_message(mcl_record(Churn.FEATURES, "status", StatusClass(removed=True)))
    intake.handle_batch(_batch(status, first=1))  # handled on top of the batch in flight
    store.full = True
    with pytest.raises(OSError, match="disk is full"):
        commit()
    store.full = False

    intake.reload()

    assert intake.mirror.aspect_json(Churn.RAW, "schemaMetadata") == before
    assert not intake.mirror.is_removed(Churn.FEATURES) and not intake.mirror.write_in_flight
    again = intake.handle_batch(_batch(_rename(), status))  # what the runtime reads again
    assert [len(v.firsts) for v in again.verdicts] == [1, 0]  # the risk was never stored as reported
    intake.begin_settle(again.verdicts)()
    counts = IntakeCounts.from_counters(store.counters())
    assert (counts.applied, counts.total) == (2, 2) and intake.stored_offsets() == {(TOPIC, 0): 2}
    assert MetadataMirror.open(tmp_path).is_removed(Churn.FEATURES)


def test_a_risk_of_a_batch_never_settled_is_reported_again_when_the_batch_is_read_again(tmp_path: Path) -> None:
    intake = _churn_intake(tmp_path)
    unpublished = intake.handle_batch(_batch(_rename()))  # its first event never reached the bus: not settled
    again = intake.handle_batch(_batch(_rename()))  # the runtime reads the batch again

    assert [len(v.firsts) for v in unpublished.verdicts] == [1] and [len(v.firsts) for v in again.verdicts] == [1]
    intake.settle_batch(again.verdicts)
    assert intake.counts.total == 1 and intake.stored_offsets() == {(TOPIC, 0): 1}


def test_a_change_without_its_previous_value_read_again_is_compared_with_what_is_stored(tmp_path: Path) -> None:
    intake = _churn_intake(tmp_path)
    schema = _schema()
    no_previous = avro_message(
        mcl_record(Churn.RAW, "schemaMetadata", without_column(schema, schema.fields[0].fieldPath))
    )
    status = avro_message(mcl_record(Churn.FEATURES, "status", StatusClass(removed=True)))
    unpublished = intake.handle_batch(_batch(no_previous, status))  # never settled: the mirror's state is pending
    again = intake.handle_batch(_batch(no_previous, status))

    assert [len(v.firsts) for v in unpublished.verdicts] == [1, 0]
    assert [len(v.firsts) for v in again.verdicts] == [1, 0]  # not compared with its own unsettled value
    intake.settle_batch(again.verdicts)
    assert MetadataMirror.open(tmp_path).is_removed(Churn.FEATURES) and intake.counts.applied == 2
