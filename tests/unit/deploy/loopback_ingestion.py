"""The detector's ingestion app on a loopback port, with a real artifact store and real signing; what it
publishes is collected, and the verdict it serves comes from a function the test chooses."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn

from libs.artifacts.store import LocalArtifactStore
from libs.bus.embedded_broker import free_loopback_port
from libs.events.codec import SignedEvent
from modelguard.reporter import sign_report
from services.detector.ingest_api import IngestPorts, ingestion_app
from services.detector.ingest_verdict import Verdict, verdict_of
from services.detector.policy_catalog import PolicyCatalog
from tests.support.sample_events import Keys

TOKEN = "ci-token-0123456789abcdef"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"

VerdictOf = Callable[[str, str, list[SignedEvent]], Verdict]


@dataclass
class LoopbackIngestion:
    url: str
    artifacts: LocalArtifactStore
    keys: Keys
    published: list[SignedEvent] = field(default_factory=list)


@contextmanager
def loopback_ingestion(
    root: Path, verdict: VerdictOf = verdict_of, catalog: PolicyCatalog | None = None
) -> Iterator[LoopbackIngestion]:
    """With ``catalog``, the models' policies (and the submitted ones) are the catalog's; else only MODEL's."""
    keys = Keys("reporter")
    artifacts = LocalArtifactStore(root / "artifacts")
    port = free_loopback_port()
    running = LoopbackIngestion(f"http://127.0.0.1:{port}", artifacts, keys)

    async def publish(signed: SignedEvent) -> None:
        running.published.append(signed)

    def served_verdict(incident_id: str, run_id: str) -> Verdict:
        return verdict(incident_id, run_id, [e for e in running.published if e.event.meta.incident_id == incident_id])

    def metric_for(urn: str) -> str | None:
        if catalog is None:
            return "f1" if urn == MODEL else None
        loaded = catalog.policy_for(urn)
        return loaded.policy.gate.metric if loaded is not None else None

    ports = IngestPorts(
        token=TOKEN,
        artifacts=artifacts,
        metric_for=metric_for,
        sign=lambda report, metric: sign_report(report, metric, keys["reporter"]),
        publish=publish,
        verdict=served_verdict,
        submit_policy=catalog.submit if catalog is not None else None,
    )
    server = uvicorn.Server(uvicorn.Config(ingestion_app(ports), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield running
    finally:
        server.should_exit = True
        thread.join(timeout=10)
