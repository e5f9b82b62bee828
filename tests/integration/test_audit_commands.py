"""The audit commands over the real stack and a lost broker.

The churn incident runs on a first broker without a publisher, so it stops at RepairValidated; that broker is
then lost and the stack comes back on a new, empty one. `republish` re-sends the last logged event and the
pipeline finishes the incident exactly once; `rerun` reproduces every logged digest; `replay` lists the incident
as published; an attestation of the logged RepairValidated verifies offline and fails after one changed byte.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import pytest

from contracts.meta import EventMeta
from libs.attestation import attest_publication
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, verify_incident
from libs.settings import load_settings
from libs.signing.keys import KeyRegistry, load_private_key
from modelguard.cli import main
from modelguard.incident_log import incident_events, run_finished, wait_for
from modelguard.stack import SCENARIOS, SERVICES, stack_down, stack_up
from modelguard.submit import submit
from tests.support.broker import kafka_broker
from tests.support.running_stack import StackHome, environment
from tests.support.sample_events import REPAIRED_INCIDENT_EVENTS

pytestmark = [pytest.mark.broker, pytest.mark.e2e]

CHURN = SCENARIOS / "churn-monthly-spend"
RUN = "audit-run-1"
WITHOUT_PUBLISHER = tuple(s for s in SERVICES if s != "publisher")


@dataclass
class AuditedStack(StackHome):
    incident_id: str
    broker_was_lost: bool

    def events(self) -> list[SignedEvent]:
        return incident_events(self.ledger, self.incident_id, self.registry)

    def of_type(self, event_type: str) -> list[SignedEvent]:
        return [e for e in self.events() if e.event.meta.event_type == event_type]


def _validated(events: list[SignedEvent]) -> bool:
    return any(e.event.meta.event_type == "RepairValidated" for e in events)


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuditedStack]:
    home: Path = tmp_path_factory.mktemp("audit")
    with environment({"MODELGUARD_HOME": str(home)}):
        settings = load_settings()
        with kafka_broker(home / "first-broker") as first:
            stack_up(settings, first, services=WITHOUT_PUBLISHER)
            try:
                reported = submit(settings, CHURN, RUN, 42)
                incident = reported.signed.event.meta.incident_id
                registry = KeyRegistry.load(settings.key_registry_path)
                wait_for(LedgerStore(settings.ledger_url), incident, registry, _validated, timeout_s=180)
            finally:
                stack_down(settings)
        with kafka_broker(home / "second-broker") as second:
            stack_up(settings, second)
            try:
                yield AuditedStack(settings, incident, broker_was_lost=second != first)
            finally:
                stack_down(settings)


@dataclass(frozen=True)
class Republished:
    """What `republish` said, run once for the module, and the incident's last event before it."""

    last_before: EventMeta
    dry_run: tuple[int, str] | None
    real: tuple[int, str] | None
    """None when the broker was not lost (MODELGUARD_KAFKA_BOOTSTRAP): the publisher finished the incident."""
    events: list[SignedEvent]


def _said(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(argv)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def republished(audited: AuditedStack) -> Republished:
    """The incident, stopped at RepairValidated by the lost broker, finished by `republish` (whichever test asks
    first): the tests that read the finished incident do not depend on the republish test running before them."""
    last_before = audited.events()[-1].event.meta
    dry_run = _said(["republish", "--dry-run"]) if audited.broker_was_lost else None
    real = _said(["republish"]) if audited.broker_was_lost else None
    events = wait_for(audited.ledger, audited.incident_id, audited.registry, run_finished(RUN), timeout_s=120)
    return Republished(last_before, dry_run, real, events)


def test_republish_resends_the_last_event_and_the_pipeline_finishes_the_incident_once(
    audited: AuditedStack, republished: Republished, capsys: pytest.CaptureFixture[str]
) -> None:
    if republished.dry_run is None or republished.real is None:
        pytest.skip("the broker comes from MODELGUARD_KAFKA_BOOTSTRAP: there is no broker to lose")
    last = republished.last_before
    assert last.event_type == "RepairValidated"

    code, out = republished.dry_run
    assert code == 0 and f"{audited.incident_id}  would re-send RepairValidated {last.event_id}" in out
    code, out = republished.real
    assert code == 0 and f"re-sent RepairValidated {last.event_id} to modelguard.repair-validated.v1" in out
    assert "note:" not in out, "no service had handled it yet"

    events = republished.events
    types = [e.event.meta.event_type for e in events]
    assert types == [*REPAIRED_INCIDENT_EVENTS]
    assert events[-1].event.meta.causation_id == last.event_id
    assert verify_incident(audited.ledger, audited.incident_id, audited.registry).ok

    assert main(["republish"]) == 0
    assert "nothing to re-send" in capsys.readouterr().out
    assert len(audited.of_type("Published")) == 1


def test_rerun_of_the_churn_incident_reproduces_every_digest(
    audited: AuditedStack, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["rerun", audited.incident_id]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()[1:-1]]
    assert [(r[0], r[1]) for r in rows] == [
        ("detector", "RegressionDetected"),
        ("context", "ContextCollected"),
        ("diagnoser", "DiagnosisCompleted"),
        ("repairer", "RepairProposed"),
        ("validator", "RepairValidated"),
    ]
    assert all(r[3] == r[4] and r[5] == "yes" for r in rows), out
    assert out.splitlines()[-1] == "5 of 5 re-run phase outputs reproduce their logged digest"
    assert len(audited.of_type("Published")) <= 1, "a rerun never publishes"


def test_replay_lists_the_incident_as_published(
    audited: AuditedStack, republished: Republished, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["replay"]) == 0
    line = next(row for row in capsys.readouterr().out.splitlines() if row.startswith(audited.incident_id))
    assert line.split()[1:3] == ["published", "publish"]
    written = json.loads((audited.settings.home / "projections.json").read_text())
    assert written["incidents"][audited.incident_id]["status"] == "published"
    assert written["ledger_position"] == audited.ledger.head_position()


def test_an_attestation_of_the_logged_repair_verifies_offline_and_not_after_one_changed_byte(
    audited: AuditedStack, republished: Republished, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    source = audited.of_type("RepairValidated")[0]
    publisher = load_private_key("publisher", audited.settings.keys_dir / "publisher.key")
    attestation = attest_publication(source, publisher)
    path = tmp_path / "attestation.intoto.json"
    path.write_bytes(attestation.envelope_bytes)
    keys = str(audited.settings.key_registry_path)

    assert main(["verify", "--attestation", str(path), "--keys", keys, "--offline"]) == 0
    out = capsys.readouterr().out
    assert f"attestation {path}: verified offline" in out
    assert f"subject churn_model/features.py sha256 {source.event.payload.patch.artifact.sha256}" in out
    assert "causal chain of 6 signed event(s)" in out and "validation passed" in out

    assert main(["verify", "--attestation", str(path), "--ledger"]) == 0
    assert "ledger: all 6 chain events found, signatures verified, in causal order" in capsys.readouterr().out
    published = audited.of_type("Published")[0].event.payload
    if published.attestation is not None:  # the publisher attests too: the same source and key, the same bytes
        assert published.attestation.sha256 == attestation.digest

    flipped = bytearray(attestation.envelope_bytes)
    flipped[len(flipped) // 2] ^= 0x01
    path.write_bytes(bytes(flipped))
    assert main(["verify", "--attestation", str(path), "--keys", keys, "--offline"]) == 1
    out = capsys.readouterr().out
    assert f"attestation {path}: FAILED" in out
    assert not any(line.strip().startswith("signed by") for line in out.splitlines())  # no claim of a signer
