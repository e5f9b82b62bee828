"""The MCL intake's batch path: one verdict per record in order, nothing committed before the batch settles, then
state, counts, change log and each partition's offset together; a registry outage stops the batch at its record;
a bug met in one record dead-letters that record only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from datahub.metadata.schema_classes import SchemaMetadataClass, StatusClass

from libs.bus.external_input import DeadLetterVerdict, ExternalRecord, InputPosition, RecordVerdict
from libs.datahub.mcl.aspect_decode import TypedAspect, decode_aspect
from libs.datahub.mcl.avro_schema import ParsedSchema, shipped_mcl_schema
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
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
