"""The churn incident end to end over the real broker: every phase computed, published once, verifiable."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from datahub.emitter.mcp import MetadataChangeProposalWrapper
from datahub.metadata.schema_classes import AssertionInfoClass, AssertionRunEventClass, IncidentInfoClass

from libs.ledger import verify_incident
from modelguard.incident_log import incident_events, wait_for
from modelguard.reporter import ReportedRun
from modelguard.stack import pid_alive, read_state, stack_status
from modelguard.submit import submit, wait_for_run
from modelguard.summary import publication_kind
from tests.e2e.conftest import CHURN, RunningStack
from tests.support.sample_events import REPAIRED_INCIDENT_EVENTS

pytestmark = [pytest.mark.e2e, pytest.mark.broker]


def _types(events: list, run_id: str) -> list[str]:
    return [e.event.meta.event_type for e in events if getattr(e.event.payload, "run_id", None) == run_id]


@pytest.fixture(scope="module")
def first_run(stack: RunningStack) -> tuple[ReportedRun, list]:
    """The incident's first run on this stack, whichever test asks first: every test of this module submits the
    same bundle (one incident), so the first publication is this run's and the others are retries of it."""
    reported = submit(stack.settings, CHURN, "e2e-run-1", 42)
    return reported, wait_for_run(stack.settings, reported, timeout_s=600)


def test_churn_regression_is_detected_diagnosed_repaired_validated_and_published(
    stack: RunningStack, first_run: tuple[ReportedRun, list]
) -> None:
    reported, events = first_run
    assert _types(events, "e2e-run-1") == [*REPAIRED_INCIDENT_EVENTS]
    by_type = {e.event.meta.event_type: e.event.payload for e in events}
    gate = by_type["RegressionDetected"].gate
    assert gate.regressed and gate.baseline - gate.candidate > gate.tolerance
    # the churn workspace declares predict: its CI claims no figure, the detector's referee computes both
    assert gate.metric_source == "referee" and reported.evaluation.claimed is None
    assert reported.evaluation.evaluation_command[:2] == ["python", "predict.py"]

    context = by_type["ContextCollected"].context
    assert context.model_urn == reported.evaluation.workspace.model_urn
    assert context.deployments, "the context reaches the model's deployment"

    diagnosis = by_type["DiagnosisCompleted"]
    assert diagnosis.hypothesis == "feature_transformation"
    assert diagnosis.report.invalid_values["candidate"] > 0 == diagnosis.report.invalid_values["base"]
    ranked = diagnosis.report.hypotheses
    assert len(ranked) >= 2 and ranked[0].score > ranked[1].score

    patch = by_type["RepairProposed"].patch
    assert patch.files == ["churn_model/features.py"] and patch.added_lines == 2 and patch.removed_lines == 0

    validation = by_type["RepairValidated"].validation
    assert validation.tests_failed == 0 and validation.tests_passed > 0
    assert validation.invalid_values_after == 0 and validation.source_unchanged
    assert abs(validation.metric_after_repair - gate.baseline) <= gate.tolerance

    published = by_type["Published"]
    kinds = {publication_kind(c.channel, c.identifier): c.status for c in published.channels}
    assert kinds == {
        "github": "created",
        "datahub-assertion": "created",
        "datahub-assertion-run": "created",
        "datahub": "created",
    }
    # the publications hold the gate as an assertion on the model, this evaluation's run, and the incident it raised
    incident_id = reported.signed.event.meta.incident_id
    proposals = [
        MetadataChangeProposalWrapper.from_obj(o)
        for path in (stack.settings.publish_dir / "datahub").rglob("*.json")
        for o in json.loads(path.read_text())
    ]
    incident_urn = f"urn:li:incident:modelguard-{incident_id.removeprefix('inc-')}"
    [incident] = [m.aspect for m in proposals if m.entityUrn == incident_urn]
    assert isinstance(incident, IncidentInfoClass) and incident.source is not None
    assert incident.source.type == "ASSERTION_FAILURE"
    [info] = [
        m.aspect for m in proposals if m.entityUrn == incident.source.sourceUrn and m.aspectName == "assertionInfo"
    ]
    assert isinstance(info, AssertionInfoClass) and info.customAssertion is not None
    assert info.customAssertion.entity == by_type["RegressionDetected"].workspace.model_urn
    [run] = [
        m.aspect
        for m in proposals
        if isinstance(m.aspect, AssertionRunEventClass) and m.aspect.runId == f"{incident_id}/e2e-run-1"
    ]
    assert run.assertionUrn == incident.source.sourceUrn and run.result is not None
    assert run.result.type == "FAILURE" and run.result.actualAggValue == gate.candidate
    assert list((stack.settings.publish_dir / "github").rglob("*.md"))

    incident = reported.signed.event.meta.incident_id
    verification = verify_incident(stack.ledger, incident, stack.registry)
    # every event of the incident so far: this run's, and a retry's when another test of the module ran first
    assert verification.ok and verification.events_checked == len(
        incident_events(stack.ledger, incident, stack.registry)
    )
    assert verification.events_checked >= len(events)


def test_a_ci_retry_publishes_nothing_new(stack: RunningStack, first_run: tuple[ReportedRun, list]) -> None:
    reported = submit(stack.settings, CHURN, "e2e-run-2", 42)
    events = wait_for_run(stack.settings, reported, timeout_s=600)
    published = [e.event.payload for e in events if e.event.meta.event_type == "Published"][-1]
    assert published.run_id == "e2e-run-2"
    kinds = {publication_kind(c.channel, c.identifier): c.status for c in published.channels}
    assert kinds == {
        "github": "noop",
        "datahub-assertion": "noop",
        "datahub-assertion-run": "created",
        "datahub": "noop",
    }
    assert len(list((stack.settings.publish_dir / "github").rglob("*.md"))) == 1


def test_a_service_killed_mid_incident_is_started_again_and_finishes_it_exactly_once(
    stack: RunningStack, first_run: tuple[ReportedRun, list]
) -> None:
    state = read_state(stack.settings.home)
    assert state is not None
    reported = submit(stack.settings, CHURN, "e2e-run-kill", 42)
    incident = reported.signed.event.meta.incident_id
    # wait until the diagnoser has its input, then kill it while it computes
    wait_for(stack.ledger, incident, stack.registry, lambda ev: "ContextCollected" in _types(ev, "e2e-run-kill"), 300)
    victim = state.services["diagnoser"]
    os.killpg(victim, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while pid_alive(victim) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(victim)
    # nobody restarts it by hand: the stack's supervisor starts it again
    deadline = time.monotonic() + 120
    status = stack_status(stack.settings)["diagnoser"]
    while not (status.running and status.pid != victim) and time.monotonic() < deadline:
        time.sleep(0.2)
        status = stack_status(stack.settings)["diagnoser"]
    assert status.running and status.pid != victim
    assert (status.restarts, status.last_exit) == (1, -signal.SIGKILL)
    events = wait_for_run(stack.settings, reported, timeout_s=600)
    types = _types(events, "e2e-run-kill")
    assert sorted(types) == sorted(set(types)), f"a phase ran twice into the ledger: {types}"
    assert types[-1] == "Published"


def test_a_changed_byte_in_the_ledger_is_found_and_named(
    stack: RunningStack, first_run: tuple[ReportedRun, list]
) -> None:
    incident = first_run[0].signed.event.meta.incident_id
    events = incident_events(stack.ledger, incident, stack.registry)
    target = events[2].event.meta
    db = stack.settings.ledger_url.removeprefix("sqlite:///")
    tampered = db + ".tampered"
    with sqlite3.connect(db) as source, sqlite3.connect(tampered) as copy:
        source.backup(copy)
    with sqlite3.connect(tampered) as copy:
        # an attacker with write access to the file removes the append-only triggers first
        for (trigger,) in copy.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            copy.execute(f"DROP TRIGGER {trigger}")
        row = copy.execute("SELECT envelope FROM ledger_events WHERE event_id = ?", (target.event_id,)).fetchone()
        envelope: str = row[0]
        flipped = envelope[:100] + ("A" if envelope[100] != "A" else "B") + envelope[101:]
        copy.execute("UPDATE ledger_events SET envelope = ? WHERE event_id = ?", (flipped, target.event_id))
    env = dict(os.environ, MODELGUARD_LEDGER_URL=f"sqlite:///{tampered}")
    result = subprocess.run(
        [sys.executable, "-m", "modelguard", "verify", incident], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert target.event_id in result.stdout and target.event_type in result.stdout
    clean = subprocess.run(
        [sys.executable, "-m", "modelguard", "verify", incident], capture_output=True, text=True, timeout=120
    )
    assert clean.returncode == 0, clean.stdout + clean.stderr
