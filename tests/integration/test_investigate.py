"""`modelguard investigate`: the same handlers without a broker give the same verifiable incident, and the CI
job's exit code is the gate's."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from libs.bundle.load import load_bundle
from libs.ledger import LedgerStore, verify_checkpoints, verify_incident
from libs.settings import load_settings
from libs.signing.keys import KeyRegistry
from modelguard.audit_rerun import rerun_incident, rerun_settings, service_definitions
from modelguard.cli import main
from modelguard.investigate import install_bundle_inputs, investigate
from modelguard.stack import REPO_ROOT, SCENARIOS
from tests.support.sample_events import REPAIRED_INCIDENT_EVENTS
from tests.support.tiny_bundle import make_tiny_bundle

CHURN = SCENARIOS / "churn-monthly-spend"


def test_investigate_runs_every_phase_in_process_and_logs_a_verifiable_incident(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    settings = load_settings()
    seen: list[str] = []
    events = investigate(settings, CHURN, "ci-1", 7, lambda e: seen.append(e.event.meta.event_type))
    assert seen == [e.event.meta.event_type for e in events] == [*REPAIRED_INCIDENT_EVENTS]
    incident = events[0].event.meta.incident_id
    store, registry = LedgerStore(settings.ledger_url), KeyRegistry.load(settings.key_registry_path)
    assert verify_incident(store, incident, registry).ok
    # the rerun reads the same DataHub files the investigation did
    same_inputs = install_bundle_inputs(settings, load_bundle(CHURN))
    rows = rerun_incident(
        store, registry, incident, service_definitions(rerun_settings(same_inputs, tmp_path / "rerun"))
    )
    assert len(rows) == 5 and all(r.equal for r in rows)
    assert list((settings.publish_dir / "github").rglob("*.md"))

    # the CLI writes the outcome and exits with its code: a validated repair is 10, not 0, so CI fails
    out = tmp_path / "out"
    assert main(["investigate", str(CHURN), "--out", str(out), "--run-id", "ci-2"]) == 10
    summary = json.loads((out / "summary.json").read_text())
    assert summary["outcome"] == "repair_validated" and summary["exit_code"] == 10
    assert summary["diagnosis"]["hypothesis"] == "feature_transformation"
    assert summary["metric"]["candidate"] < summary["metric"]["baseline"] - summary["metric"]["tolerance"]
    assert abs(summary["metric"]["after_repair"] - summary["metric"]["baseline"]) <= summary["metric"]["tolerance"]
    assert summary["repair"]["strategy"] == "guarded_division" and summary["repair"]["lines"] == 2
    assert (out / "repair.patch").read_text().startswith("--- a/")
    assert "feature_transformation" in (out / "diagnosis.md").read_text()
    assert len(list((out / "events").glob("*.json"))) == 7


def test_investigate_of_a_harmless_change_passes_the_gate_with_exit_0(tmp_path: Path) -> None:
    bundle = make_tiny_bundle(tmp_path / "bundle", candidate="harmless")
    out = tmp_path / "out"
    assert main(["investigate", str(bundle), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["outcome"] == "gate_passed" and summary["diagnosis"] is None and summary["repair"] is None


def test_reported_metrics_drive_the_gate_and_the_diagnosis_checks_them_by_running(tmp_path: Path) -> None:
    """CI says the candidate regressed; running both revisions on both windows shows no drop: abstain, say why.
    Only a self-reported workspace's CI figures drive the gate (with predict, the referee's do)."""
    bundle = make_tiny_bundle(tmp_path / "bundle", candidate="harmless", contract="evaluate")
    spec = yaml.safe_load((bundle / "bundle.yaml").read_text())
    spec["metrics"] = {"baseline": {"accuracy": 0.95}, "candidate": {"accuracy": 0.70}}
    (bundle / "bundle.yaml").write_text(yaml.safe_dump(spec))
    out = tmp_path / "out"
    assert main(["investigate", str(bundle), "--out", str(out)]) == 14
    summary = json.loads((out / "summary.json").read_text())
    assert summary["outcome"] == "abstained"
    assert (summary["metric"]["baseline"], summary["metric"]["candidate"]) == (0.95, 0.70)
    assert "within the gate's tolerance" in summary["diagnosis"]["abstention_reason"]


def test_investigate_ci_exits_by_the_central_policys_ci_outcomes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--ci: 0 when the central policy passes the outcome, else the outcome's own code; without it, the code."""
    bundle = make_tiny_bundle(tmp_path / "bundle", candidate="harmless", contract="evaluate")
    spec = yaml.safe_load((bundle / "bundle.yaml").read_text())
    spec["metrics"] = {"baseline": {"accuracy": 0.95}, "candidate": {"accuracy": 0.70}}
    (bundle / "bundle.yaml").write_text(yaml.safe_dump(spec))
    central = yaml.safe_load((REPO_ROOT / "policy" / "central.yaml").read_text())
    central["ci"]["outcomes"]["abstained"] = "pass"
    lenient = tmp_path / "central.yaml"
    lenient.write_text(yaml.safe_dump(central))

    by_default = main(["investigate", str(bundle), "--out", str(tmp_path / "a"), "--ci"])
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(lenient))
    passed = main(["investigate", str(bundle), "--out", str(tmp_path / "b"), "--ci"])
    without_ci = main(["investigate", str(bundle), "--out", str(tmp_path / "c")])

    assert (by_default, passed, without_ci) == (14, 0, 14)
    said = capsys.readouterr().out
    assert "CI fail (abstained, by the central policy's ci.outcomes)" in said
    assert "CI pass (abstained, by the central policy's ci.outcomes)" in said


def test_investigate_never_changes_the_working_directory_and_leaves_the_incident_under_a_signed_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from another folder with a relative --out: every phase reads the repository's DataHub files and names
    them as the stack's processes do, the process's working directory never moves (handlers run in threads: a
    chdir would move it for all of them), and the ledger service seals a checkpoint over every event on stopping."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MODELGUARD_HOME", raising=False)
    seen: set[str] = set()
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            seen.add(os.getcwd())
            time.sleep(0.005)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        code = main(["investigate", str(CHURN), "--out", "relative-out", "--run-id", "cwd-1"])
    finally:
        stop.set()
        watcher.join()
    assert code == 10
    assert seen == {str(tmp_path)}
    out = tmp_path / "relative-out"
    [context] = [json.loads(p.read_text()) for p in (out / "events").glob("*-ContextCollected.json")]
    model = context["event"]["payload"]["context"]["model"]
    assert model["provenance"]["location"] == "fixtures/scenarios/churn-monthly-spend/datahub/metadata.json"

    home = out / "home"
    store = LedgerStore(f"sqlite:///{home / 'ledger.sqlite'}")
    registry = KeyRegistry.load(home / "keys" / "registry.json")
    latest = store.latest_checkpoint()
    assert latest is not None and latest.position == store.count() == 7
    assert verify_checkpoints(store, registry).ok


def test_an_input_a_service_gives_up_on_is_named_in_one_line_with_exit_1(tmp_path: Path) -> None:
    """DataHub's GMS does not answer: the context service retries the regression as over Kafka (the central
    policy's delivery.max_attempts, its backoff), then dead-letters it; investigate says so in one line on stderr,
    the services' lines (FastStream's tracebacks of the retried attempts too) going to their log file."""
    central = yaml.safe_load((REPO_ROOT / "policy" / "central.yaml").read_text())
    central["delivery"] = {"max_attempts": 2, "backoff_base_s": 0.05, "backoff_cap_s": 0.1}
    policy = tmp_path / "central.yaml"
    policy.write_text(yaml.safe_dump(central))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MODELGUARD_")},
        "MODELGUARD_CENTRAL_POLICY": str(policy),
        "MODELGUARD_CONTEXT_PROVIDER": "sdk",
        "DATAHUB_GMS_URL": f"http://127.0.0.1:{closed}",
    }
    bundle = make_tiny_bundle(tmp_path / "bundle")
    out = tmp_path / "out"

    done = subprocess.run(
        [sys.executable, "-m", "modelguard", "investigate", str(bundle), "--out", str(out)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )

    err = done.stderr.strip().splitlines()
    assert done.returncode == 1, done.stderr
    assert len(err) == 1, done.stderr
    assert err[0].startswith("modelguard investigate: tiny-threshold: context dead-lettered RegressionDetected ")
    assert "retries-exhausted" in err[0] and err[0].endswith(
        f"(the services' log: {out / 'home' / 'logs' / 'investigate.log'})"
    )
    logged = (out / "home" / "logs" / "investigate.log").read_text()
    assert "Traceback" in logged and "dead-letter retries-exhausted" in logged
    assert not (out / "summary.json").exists()
