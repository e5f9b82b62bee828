"""Rerun compares each recomputed payload with the logged one, and says where they differ."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from pydantic import BaseModel

from contracts.registry import CONTRACTS
from contracts.service_channels import ServiceChannels
from libs.bus.handler_errors import RejectedInput
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore
from modelguard.audit_payload_diff import differing_paths
from modelguard.audit_rerun import payload_digest, rerun_incident, rerun_table
from tests.support.sample_events import SampleKeys, repaired_incident

Handler = Callable[[SignedEvent], list[BaseModel]]


def _definitions(handler: Handler) -> Callable[[str], ServiceDefinition]:
    return lambda service: ServiceDefinition(
        service, "test", ServiceChannels("any", consumes=tuple(CONTRACTS)), handler=handler
    )


@pytest.fixture
def incident(store: LedgerStore, keys: SampleKeys) -> list[SignedEvent]:
    events = repaired_incident(keys, "rerun")
    for event in events:
        store.append(event)
    return events


def _replaying(incident: list[SignedEvent]) -> Handler:
    """A handler that recomputes exactly what was logged for each cause."""
    effect_of = {e.event.meta.causation_id: e.event.payload for e in incident}
    return lambda cause: [effect_of[cause.event.meta.event_id]]


def test_identical_recomputations_reproduce_every_digest(
    store: LedgerStore, keys: SampleKeys, incident: list[SignedEvent]
) -> None:
    incident_id = incident[0].event.meta.incident_id
    rows = rerun_incident(store, keys.registry, incident_id, _definitions(_replaying(incident)))
    assert [(r.phase, r.event_type) for r in rows] == [
        ("detector", "EvaluationReported"),
        ("detector", "RegressionDetected"),
        ("diagnoser", "DiagnosisCompleted"),
        ("repairer", "RepairProposed"),
        ("validator", "RepairValidated"),
    ]
    assert rows[0].skipped and rows[0].note.startswith("no logged cause"), "a first event has nothing to rerun from"
    assert all(r.equal and not r.failed for r in rows[1:])
    assert rows[4].logged_digest == payload_digest(incident[4].event.payload)
    assert rerun_table(rows)[5].split()[-1] == "yes"


def test_a_changed_value_is_a_mismatch_that_names_its_path(
    store: LedgerStore, keys: SampleKeys, incident: list[SignedEvent]
) -> None:
    replaying = _replaying(incident)

    def drifting(cause: SignedEvent) -> list[BaseModel]:
        payload = replaying(cause)[0]
        if cause.event.meta.event_type != "RepairProposed":
            return [payload]
        validation = payload.validation.model_copy(update={"tests_passed": 13})  # type: ignore[attr-defined]
        return [payload.model_copy(update={"validation": validation})]

    rows = rerun_incident(store, keys.registry, incident[0].event.meta.incident_id, _definitions(drifting))
    validator = rows[-1]
    assert validator.failed and validator.rerun_digest is not None
    assert validator.note == "differs at validation.tests_passed"
    assert "NO" in rerun_table(rows)[-1]


def test_a_rejected_input_or_another_outcome_is_a_failure_with_a_reason(
    store: LedgerStore, keys: SampleKeys, incident: list[SignedEvent]
) -> None:
    def rejecting(cause: SignedEvent) -> list[BaseModel]:
        raise RejectedInput("inputs-unavailable", "artifact gone")

    rows = rerun_incident(store, keys.registry, incident[0].event.meta.incident_id, _definitions(rejecting))
    assert all(r.failed for r in rows[1:])
    assert rows[1].note == "the handler rejected its input: inputs-unavailable: artifact gone"

    rows = rerun_incident(store, keys.registry, incident[0].event.meta.incident_id, _definitions(lambda _: []))
    assert rows[1].failed and rows[1].note == "the rerun produced nothing"


def test_one_run_can_be_rerun_alone(store: LedgerStore, keys: SampleKeys, incident: list[SignedEvent]) -> None:
    incident_id = incident[0].event.meta.incident_id
    definitions = _definitions(_replaying(incident))
    assert len(rerun_incident(store, keys.registry, incident_id, definitions, run_id="ci-rerun")) == 5
    assert rerun_incident(store, keys.registry, incident_id, definitions, run_id="another-run") == []


def test_differing_paths_walks_documents_in_key_order() -> None:
    logged = {"a": 1, "b": {"c": [1, 2, {"d": 0.5}]}, "e": "x"}
    rerun = {"a": 1, "b": {"c": [1, 3, {"d": 0.25}]}, "f": "x"}
    assert differing_paths(logged, rerun) == ["b.c[1]", "b.c[2].d", "e", "f"]
    assert differing_paths({"l": [1]}, {"l": [1, 2]}) == ["l"]
    assert differing_paths({"n": 1}, {"n": 1.0}) == ["n"], "an int that became a float changes the canonical bytes"
    assert differing_paths(logged, logged) == []
