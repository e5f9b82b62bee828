"""Every validation rule of the MCL intake on real bytes: each malformed record is refused with its reason
(never applied), each valid one is applied or skipped on purpose and counted; the mirror holds only the good."""

from __future__ import annotations

import json
import logging

import pytest

from libs.bus.external_input import InputPosition
from libs.bus.handler_errors import RejectedInput
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.schema_registry import schema_resolver_for
from services.context.change_log import ChangeLog
from services.context.intake_counts import IntakeCounts
from services.context.mcl_intake import MclIntake
from tests.support.mcl_poison import (
    ASSERTION,
    DATASET,
    PoisonCase,
    classes,
    golden_available,
    good_records,
    malformed_count,
    poison_cases,
    timeseries_runs,
)

CASES = poison_cases()
TOPIC = "MetadataChangeLog_Versioned_v1"


def _intake() -> MclIntake:
    return MclIntake(MclDecoder(schema_resolver_for(None)), MetadataMirror.in_memory())


def test_the_suite_covers_at_least_forty_malformed_records_of_many_classes() -> None:
    assert malformed_count(CASES) >= 40
    assert len(classes(CASES)) >= 20


@pytest.mark.parametrize("case", [c for c in CASES if c.verdict == "dead_lettered"], ids=lambda c: c.name)
def test_a_malformed_record_is_dead_lettered_with_its_reason_and_changes_nothing(case: PoisonCase) -> None:
    intake = _intake()
    with pytest.raises(RejectedInput) as caught:
        intake(case.raw)
    assert caught.value.reason == case.reason, caught.value.detail
    assert intake.counts.dead_lettered == {case.reason: 1} and intake.counts.applied == 0
    assert intake.mirror.aspect_json(DATASET, "ownership") is None
    assert intake.mirror.aspect_json(DATASET, "schemaMetadata") is None
    assert intake.mirror.entity_count == 0  # nothing indexed either


@pytest.mark.parametrize("case", [c for c in CASES if c.verdict == "skipped"], ids=lambda c: c.name)
def test_a_valid_record_the_mirror_does_not_keep_is_skipped_and_counted(case: PoisonCase) -> None:
    intake = _intake()
    assert intake(case.raw) == []
    assert intake.counts.skipped == {case.reason: 1} and intake.counts.total == 1


def test_an_oversize_record_is_dead_lettered_with_its_prefix_size_and_digest_never_whole() -> None:
    case = next(c for c in CASES if c.name == "schema-24000-columns")
    assert len(case.raw) > 6_000_000
    with pytest.raises(RejectedInput) as caught:
        _intake()(case.raw)
    assert caught.value.keep is not None and caught.value.keep == case.raw[:4096]
    assert f"{len(case.raw)} bytes" in caught.value.detail and "sha256 " in caught.value.detail


def test_good_golden_records_are_applied_and_stored_validated() -> None:
    if not golden_available():
        pytest.skip("DataHub golden files absent")
    intake = _intake()
    good = good_records()
    assert len(good) >= 13
    for record in good:
        assert intake(record.raw) == []
    assert intake.counts.applied == len(good) and intake.counts.total == len(good)
    for record in good:
        assert intake.mirror.aspect(record.urn, record.aspect_name) is not None, record.name


def test_timeseries_redeliveries_are_logged_once_and_an_older_run_is_skipped() -> None:
    intake = _intake()
    for case in timeseries_runs():
        intake(case.raw)
    assert intake.counts.applied == 3 and intake.counts.skipped == {"older-timeseries-run": 1}
    runs = [change for change in ChangeLog(intake.mirror.store).recent() if change.entity_urn == ASSERTION]
    assert len(runs) == 1


def test_state_counts_and_offsets_are_committed_together_when_a_record_settles() -> None:
    intake = _intake()
    records = [*CASES[:3], *(c for c in CASES if c.verdict == "skipped")]
    for offset, case in enumerate(records):
        position = InputPosition(TOPIC, 0, offset)
        try:
            published = intake(case.raw, position)
        except RejectedInput:
            published = []
        assert intake.mirror.committed_offsets().get((TOPIC, 0), 0) == offset  # nothing committed before settling
        intake.settle(published, position)
        assert intake.mirror.committed_offsets() == {(TOPIC, 0): offset + 1}
    stored = IntakeCounts.from_counters(intake.mirror.store.counters())
    assert stored.total == len(records) and stored == intake.counts


def test_an_unsettled_record_leaves_the_stored_offset_where_it_was_so_it_comes_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    if not golden_available():
        pytest.skip("DataHub golden files absent")
    good = good_records()[0]
    first = MclIntake(MclDecoder(schema_resolver_for(None)), MetadataMirror.open(tmp_path))
    first(good.raw, InputPosition(TOPIC, 0, 0))  # applied in memory; the process dies before it settles
    first.mirror._store.close()

    again = MclIntake(MclDecoder(schema_resolver_for(None)), MetadataMirror.open(tmp_path))
    assert again.stored_offsets() == {} and again.mirror.aspect_json(good.urn, good.aspect_name) is None
    again(good.raw, InputPosition(TOPIC, 0, 0))
    again.settle([], InputPosition(TOPIC, 0, 0))
    again.mirror.close()

    reopened = MetadataMirror.open(tmp_path)
    assert reopened.committed_offsets() == {(TOPIC, 0): 1}
    assert reopened.aspect_json(good.urn, good.aspect_name) is not None
    assert IntakeCounts.from_counters(reopened.store.counters()).applied == 1


def test_the_counts_are_logged_as_one_json_object_every_n_settled_records(caplog: pytest.LogCaptureFixture) -> None:
    intake = MclIntake(MclDecoder(schema_resolver_for(None)), MetadataMirror.in_memory(), log_counts_every=2)
    skipped = next(c for c in CASES if c.verdict == "skipped")
    with caplog.at_level(logging.INFO, logger="modelguard.context.mcl"):
        for offset in range(4):
            intake(skipped.raw, InputPosition(TOPIC, 0, offset))
            intake.settle([], InputPosition(TOPIC, 0, offset))
    logged = [json.loads(r.getMessage().removeprefix("mcl intake counts ")) for r in caplog.records]
    assert [entry["skipped"] for entry in logged] == [{skipped.reason: 2}, {skipped.reason: 4}]
