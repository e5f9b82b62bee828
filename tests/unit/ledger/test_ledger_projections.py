"""Projections are a pure fold of the log: replaying the ledger rebuilds every incident's read model."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contracts.catalogue import Hypothesis
from contracts.events.context import AffectedModel, UpstreamRiskDetected
from contracts.events.publication import ChannelResult, Published
from contracts.events.repair import RepairWithheld
from contracts.events.validation import ValidationFailed
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.ledger import IncidentProjection, LedgerStore, project, replay
from tests.support.sample_events import (
    START,
    SampleKeys,
    abstained_incident,
    passed_incident,
    repaired_incident,
    sample_incident_id,
)
from tests.support.sample_owners import owned

MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn_model,PROD)"
UNOWNED = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.customers,PROD)"


def test_replay_rebuilds_a_published_repair(store: LedgerStore, keys: SampleKeys) -> None:
    for signed in repaired_incident(keys, "repaired", after_repair=0.905):
        store.append(signed)

    projection = replay(store)[sample_incident_id("repaired")]

    assert projection.hypothesis is Hypothesis.FEATURE_TRANSFORMATION
    assert projection.model_dump(exclude={"last_event_id", "first_at", "last_at"}) == {
        "incident_id": sample_incident_id("repaired"),
        "status": "published",
        "phase": "publish",
        "last_event_type": "Published",
        "model_urn": "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn_model,PROD)",
        "metric": "roc_auc",
        "baseline": 0.91,
        "candidate": 0.84,
        "after_repair": 0.905,
        "hypothesis": "feature_transformation",
        "confidence": 0.82,
        "reason": None,
        "owners": {},
        "publications": {"github": "created", "datahub": "created"},
        "event_count": 6,
        "outcome": "repair_validated",
        "cause": None,
        "changed_asset": None,
        "changed_fields": [],
        "change_summary": None,
        "deployments": [],
    }


def _withheld(keys: SampleKeys) -> list[SignedEvent]:
    events = repaired_incident(keys, "withheld")[:3]
    diagnosed = events[-1].event.payload
    payload = RepairWithheld(
        **diagnosed.model_dump(include={"run_id", "workspace", "policy", "gate"}),
        diagnosis=diagnosed.report,
        hypothesis=diagnosed.hypothesis,
        reason="the patch would touch a protected file",
        violations=["protected_path"],
        owners_to_notify=["urn:li:corpuser:alice"],
        owners=[owned(MODEL, ("urn:li:corpuser:alice", "TECHNICAL_OWNER")), owned(UNOWNED)],
    )
    return [*events, _next(keys, "repairer", payload, events[-1])]


def _validation_failed_then_published(keys: SampleKeys) -> list[SignedEvent]:
    events = repaired_incident(keys, "failed")[:4]
    proposed = events[-1].event.payload
    validated = repaired_incident(keys, "failed", after_repair=0.83)[4].event.payload
    failed = ValidationFailed(**validated.model_dump(), reason="the metric did not recover")
    events.append(_next(keys, "validator", failed, events[-1]))
    channel = ChannelResult(
        channel="github", status="noop", target="x", identifier="y", content_digest="z", dry_run=True
    )
    published = Published(
        run_id=proposed.run_id, outcome="validation_failed", source_event_type="ValidationFailed", channels=[channel]
    )
    return [*events, _next(keys, "publisher", published, events[-1])]


CASES: list[tuple[str, Callable[[SampleKeys], list[SignedEvent]], dict[str, Any]]] = [
    (
        "passed",
        lambda k: passed_incident(k, "passed"),
        {"status": "passed", "phase": "detect", "event_count": 2, "outcome": "gate_passed"},
    ),
    (
        "abstained",
        lambda k: abstained_incident(k, "abstained"),
        {"status": "abstained", "phase": "diagnose", "reason": "two causes are close", "hypothesis": None},
    ),
    (
        "withheld",
        _withheld,
        {
            "status": "withheld",
            "phase": "repair",
            "hypothesis": "feature_transformation",
            "owners": {MODEL: ["urn:li:corpuser:alice"], UNOWNED: []},
        },
    ),
    (
        "validation_failed",
        _validation_failed_then_published,
        {
            "status": "validation_failed",
            "phase": "publish",
            "after_repair": 0.83,
            "publications": {"github": "noop"},
            "outcome": "validation_failed",
        },
    ),
    (
        "open",
        lambda k: repaired_incident(k, "open")[:3],
        {"status": "open", "phase": "diagnose", "confidence": 0.82, "outcome": None},
    ),
]


@pytest.mark.parametrize(("name", "build", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_outcome_projects_its_status(
    store: LedgerStore, keys: SampleKeys, name: str, build: Callable[[SampleKeys], list[SignedEvent]], expected: dict
) -> None:
    events = build(keys)
    for signed in events:
        store.append(signed)

    projection = replay(store, keys.registry)[events[0].event.meta.incident_id]

    assert projection.model_dump(include=set(expected)) == expected
    assert projection.last_event_type == events[-1].event.meta.event_type


def test_replay_is_the_pure_fold_of_the_logged_events(store: LedgerStore, keys: SampleKeys) -> None:
    first, second = repaired_incident(keys, "one"), abstained_incident(keys, "two")
    log = [first[0], second[0], *first[1:3], *second[1:], *first[3:]]
    for signed in log:
        store.append(signed)

    replayed = replay(store, batch=2)

    assert replayed == project(e.event for e in log)
    assert set(replayed) == {sample_incident_id("one"), sample_incident_id("two")}
    assert all(isinstance(p, IncidentProjection) for p in replayed.values())


def test_an_upstream_risk_projects_its_cause_changed_asset_and_deployments_at_risk(
    store: LedgerStore, keys: SampleKeys
) -> None:
    risk = UpstreamRiskDetected(
        cause="schema_change",
        asset_urn=UNOWNED,
        change_summary="column 'age' renamed to 'tenure'",
        change_fingerprint="a" * 64,
        changed_fields=["age"],
        affected=[
            AffectedModel(
                model_urn=MODEL, deployments=["urn:li:mlModelDeployment:(sagemaker,b,PROD)"], owners=[], path=[]
            ),
            AffectedModel(
                model_urn=MODEL, deployments=["urn:li:mlModelDeployment:(sagemaker,a,PROD)"], owners=[], path=[]
            ),
        ],
    )
    event = next_event(
        risk, producer="context", producer_version="0.1.0", occurred_at=START, incident_id=sample_incident_id("risk")
    )
    store.append(seal(event, keys.keys["context"]))

    projection = replay(store, keys.registry)[sample_incident_id("risk")]

    assert projection.model_dump(
        include={"model_urn", "cause", "changed_asset", "changed_fields", "change_summary", "deployments"}
    ) == {
        "model_urn": MODEL,
        "cause": "schema_change",
        "changed_asset": UNOWNED,
        "changed_fields": ["age"],
        "change_summary": "column 'age' renamed to 'tenure'",
        "deployments": ["urn:li:mlModelDeployment:(sagemaker,a,PROD)", "urn:li:mlModelDeployment:(sagemaker,b,PROD)"],
    }
    assert projection.outcome is None and projection.status == "open"


def _next(keys: SampleKeys, producer: str, payload: Any, cause: SignedEvent) -> SignedEvent:
    event = next_event(
        payload,
        producer=producer,
        producer_version="0.1.0",
        occurred_at=cause.event.meta.occurred_at,
        causes=[cause],
    )
    return seal(event, keys.keys[producer])
