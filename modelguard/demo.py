"""`make demo`: the churn incident from detection to publication on the embedded stack, then a repeat."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from libs.artifacts.open_store import artifact_store
from libs.attestation import verify_attestation
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore, verify_incident
from libs.settings import Settings, load_settings
from libs.signing.keys import KeyRegistry
from modelguard.demo_home import default_home
from modelguard.demo_report import summary_sentences
from modelguard.incident_log import incident_events
from modelguard.stack import SCENARIOS, stack_down, stack_up
from modelguard.submit import submit, wait_for_run
from modelguard.summary import ASSERTION_RUN, build_summary
from modelguard.upstream_act import run_upstream_act

SCENARIO = SCENARIOS / "churn-monthly-spend"
PULL_REQUEST = 42
CHANGE = SCENARIO / "datahub" / "changes" / "rename-account-age.yaml"


def attestation_summary(settings: Settings, events: list[SignedEvent], registry: KeyRegistry) -> dict[str, Any]:
    """The first publication's attestation, fetched by digest and verified offline with the public keys."""
    published = [
        e.event.payload for e in events if e.event.meta.event_type == "Published" and e.event.payload.attestation
    ]
    if not published:
        return {"digest": None, "verified": False}
    ref = published[0].attestation
    check = verify_attestation(artifact_store(settings).get(ref), registry)
    return {"digest": ref.sha256, "verified": check.ok, "subject": [s.name for s in check.subject]}


def _repeat_published_only_its_run(statuses: dict[str, str]) -> bool:
    """A CI retry of the same finding changes nothing; it only records its own run of the gate's assertion."""
    others = {kind: status for kind, status in statuses.items() if kind != ASSERTION_RUN}
    return set(others.values()) == {"noop"} and statuses.get(ASSERTION_RUN) == "created"


def run_demo(out_dir: Path, home: Path, timeout_s: float = 600.0) -> int:
    """The demo in ``home`` (``demo_home``'s choice: the operator's fresh MODELGUARD_HOME, or OUT/stack afresh)."""
    if home == default_home(out_dir):
        shutil.rmtree(home, ignore_errors=True)
    os.environ["MODELGUARD_HOME"] = str(home)
    settings = load_settings()
    print(f"starting the stack in {home} ...")
    state = stack_up(settings, os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP"))
    processes = ", ".join(f"{name} (pid {pid})" for name, pid in state.services.items())
    print(f"broker at {state.bootstrap}; the services run as their own processes: {processes}")
    try:
        runs = []
        for run_id in ("demo-run-1", "demo-run-2"):
            print(f"evaluating base and candidate, submitting {run_id} ...")
            reported = submit(settings, SCENARIO, run_id, PULL_REQUEST)
            events = wait_for_run(settings, reported, timeout_s)
            runs.append(reported)
            print(
                f"{run_id}: {' → '.join(e.event.meta.event_type for e in events if e.event.payload.run_id == run_id)}"
            )
        incident = runs[0].signed.event.meta.incident_id
        registry = KeyRegistry.load(settings.key_registry_path)
        store = LedgerStore(settings.ledger_url)
        verification = verify_incident(store, incident, registry)
        events = incident_events(store, incident, registry)
        print("act 2: a breaking schema change on the raw customers table arrives from DataHub as an MCL ...")
        risk = run_upstream_act(settings, state.bootstrap, CHANGE, [SCENARIO / "datahub" / "metadata.json"])
        print(f"  {risk['summary']}")
        summary = build_summary(
            incident,
            events,
            "demo-run-1",
            "demo-run-2",
            {"events": verification.events_checked, "verified": verification.ok},
            state.services,
        )
        summary["attestation"] = attestation_summary(settings, events, registry)
        summary["risk"] = {k: risk[k] for k in ("cause", "models", "deployments", "owners", "incident_id")}
        summary["risk"]["publication"] = risk["publication"]
    finally:
        stack_down(settings)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print()
    print("\n".join(summary_sentences(summary)))
    print(f"\nwrote {out_dir / 'summary.json'}; publications under {settings.publish_dir}")
    print(
        f"console: `make console` (MODELGUARD_HOME={home} modelguard console --insecure-local) serves these incidents "
        "on http://127.0.0.1:8080/"
    )
    print(f"to look at the incident again: MODELGUARD_HOME={home} modelguard incidents show {incident}")
    # what ModelGuard guarantees whatever the data says: a verifiable log, a verifiable attestation, one publication
    broken = [
        what
        for what, holds in (
            ("the ledger does not verify", summary["ledger"]["verified"]),
            ("the attestation does not verify", summary["attestation"]["verified"]),
            ("the repeat was not a no-op", _repeat_published_only_its_run(summary["publication"]["repeat"])),
        )
        if not holds
    ]
    for what in broken:
        print(f"demo: {what}", file=sys.stderr)
    return 1 if broken else 0
