"""Submit a bundle's evaluation to a running stack and wait for its outcome."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from libs.artifacts.open_store import artifact_store
from libs.bundle.load import load_bundle
from libs.bus.dead_letters import read_dead_letters
from libs.bus.kafka_connection import KafkaConnection
from libs.bus.producer import publish_signed
from libs.ledger import LedgerStore
from libs.settings import Settings
from libs.signing.keys import KeyRegistry, load_private_key
from modelguard.incident_log import run_finished, wait_for
from modelguard.reporter import PRODUCER, ReportedRun, evaluate_bundle, sign_report
from modelguard.stack import bus_connection, read_state, stack_doorbells


def evaluate_and_sign(settings: Settings, bundle_dir: Path, run_id: str, pull_request: int | None) -> ReportedRun:
    """Play the model's CI: evaluate base and candidate, store the artifacts, sign the report."""
    started = time.monotonic()
    metric = load_bundle(bundle_dir).spec.gate.metric
    artifacts = artifact_store(settings)
    evaluation = evaluate_bundle(bundle_dir, settings.home / "ci", artifacts, run_id, pull_request)
    key = load_private_key(PRODUCER, settings.keys_dir / f"{PRODUCER}.key")
    signed = sign_report(evaluation, metric, key)
    return ReportedRun(signed, evaluation, time.monotonic() - started)


def submit(settings: Settings, bundle_dir: Path, run_id: str, pull_request: int | None) -> ReportedRun:
    """Evaluate, sign, and put the report on the running stack's bus."""
    reported = evaluate_and_sign(settings, bundle_dir, run_id, pull_request)
    state = read_state(settings.home)
    doorbells = stack_doorbells(settings, state)
    try:
        bus = bus_connection(settings, state)
        asyncio.run(publish_signed(bus, [reported.signed], settings.kafka_idempotence, doorbells))
    finally:
        doorbells.close()
    return reported


def dead_lettered(bus: KafkaConnection | str, incident_id: str, run_id: str) -> Callable[[], str | None]:
    """A reason to stop waiting: an event of this run of this incident was refused by a service."""

    def reason() -> str | None:
        letters = [d for d in read_dead_letters(bus) if d.key == incident_id and d.run_id() == run_id]
        if not letters:
            return None
        d = letters[0]
        return f"{d.service} dead-lettered {d.source}: {d.reason}: {d.detail[:500]}"

    return reason


def wait_for_run(settings: Settings, reported: ReportedRun, timeout_s: float) -> list:
    registry = KeyRegistry.load(settings.key_registry_path)
    store = LedgerStore(settings.ledger_url)
    incident = reported.signed.event.meta.incident_id
    state = read_state(settings.home)
    run_id = reported.evaluation.run_id
    failure = dead_lettered(bus_connection(settings, state), incident, run_id) if state else (lambda: None)
    return wait_for(store, incident, registry, run_finished(run_id), timeout_s, failure=failure)
