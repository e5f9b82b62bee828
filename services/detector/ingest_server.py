"""The ingestion endpoint inside the detector process: on the service's event loop, publishing through its
Kafka producer and its tracer, so a reported evaluation opens the incident's trace.

Configuration: ``settings.ingest`` (``libs/ingest_settings.py``, parsed once with the process's settings):
`MODELGUARD_INGEST_PORT` turns it on (off when unset or 0); `MODELGUARD_INGEST_HOST` (default 0.0.0.0);
`MODELGUARD_REPORTER_KEY_FILE` (default `$KEYS_DIR/reporter.key`) is the key the reports are signed with on the
CI's behalf, as `modelguard submit` signs them; `MODELGUARD_INGEST_STUCK_AFTER_S` (default 900, 0 for never) is how
long a run may go without a new event before its verdict says `stuck`. The bearer token CI presents
(`MODELGUARD_INGEST_TOKEN`, from a Secret, at least 16 characters) is read from the secrets mapping the detector's
composition root hands in (``services/detector/main.py``: the process environment), never from Settings.

The verdict reads the incident's events from the ledger's database (as `modelguard incidents` does; the detector's
role needs SELECT on it), and the run's dead letters from the detector's own record of the dead-letter topic
(services.detector.dead_letter_watch), not from any other service's store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from functools import lru_cache

import uvicorn
from opentelemetry.trace import SpanKind

from contracts.common import PolicyRef
from contracts.events.evaluation import EvaluationReported
from contracts.registry import contract_for
from libs.artifacts.open_store import artifact_store
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, ArtifactStoreUnavailable
from libs.bus.headers import event_headers
from libs.bus.runtime import ServiceRuntime
from libs.events.codec import SignedEvent, open_envelope
from libs.events.evaluation_report import PRODUCER, sign_report
from libs.ingest_settings import IngestSettings
from libs.ledger import LedgerStore
from libs.policy.ci import CiPolicy
from libs.policy.errors import PolicyError
from libs.policy.model_policy import parse_policy
from libs.settings import SettingsError
from libs.signing.keys import load_private_key
from libs.telemetry import incident_context
from services.detector.dead_letter_log import DeadLetterLog
from services.detector.dead_letter_watch import watch_dead_letters
from services.detector.ingest_api import IngestPorts, ingestion_app
from services.detector.ingest_verdict import Verdict, governing_policy, verdict_of
from services.detector.policy_catalog import detector_catalog

log = logging.getLogger("modelguard.detector.ingest")
MIN_TOKEN_LENGTH = 16


def ingest_token(secrets: Mapping[str, str]) -> str:
    """The bearer token CI presents (``MODELGUARD_INGEST_TOKEN``, from a Secret), read from ``secrets`` only when
    the endpoint is on; SettingsError (one line, never the value) when it is missing or short."""
    token = secrets.get("MODELGUARD_INGEST_TOKEN", "").strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise SettingsError(
            f"MODELGUARD_INGEST_TOKEN must be set, at least {MIN_TOKEN_LENGTH} characters, when the ingestion "
            "endpoint is on (MODELGUARD_INGEST_PORT)"
        )
    return token


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:  # the service's runtime owns SIGTERM and SIGINT
        yield


def ingestion_ports(
    runtime: ServiceRuntime, ingest: IngestSettings, token: str, dead_letters: DeadLetterLog
) -> IngestPorts:
    settings = runtime.settings
    reporter_key = load_private_key(PRODUCER, ingest.reporter_key_file)
    if (problem := runtime.registry.signing_key_problem(reporter_key)) is not None:
        raise SettingsError(f"the CI reporter's key (MODELGUARD_REPORTER_KEY_FILE): {problem}")
    policies = detector_catalog(settings.policy_dir, runtime.state, settings.central_policy)
    artifacts = artifact_store(settings)
    tracer = runtime.telemetry.tracer_provider.get_tracer("modelguard.detector.ingest")
    ledger: list[LedgerStore] = []

    def metric_for(model_urn: str) -> str | None:
        loaded = policies.policy_for(model_urn)
        return loaded.policy.gate.metric if loaded is not None else None

    def sign(evaluation: EvaluationReported, metric: str) -> SignedEvent:
        return sign_report(evaluation, metric, reporter_key)

    async def publish(signed: SignedEvent) -> None:
        meta = signed.event.meta
        with tracer.start_as_current_span(
            "POST /evaluations",
            context=incident_context(meta.incident_id),
            kind=SpanKind.SERVER,
            attributes={"modelguard.incident_id": meta.incident_id, "modelguard.event_id": meta.event_id},
        ):
            topic = contract_for(meta.event_type).topic
            await runtime.broker.publish(
                signed.envelope_bytes, topic=topic, key=meta.incident_id.encode(), headers=event_headers(signed)
            )
            runtime.doorbells.ring(topic)
        log.info("accepted %s %s of %s from CI", meta.event_type, meta.event_id, meta.incident_id)

    @lru_cache(maxsize=256)
    def ci_policy(ref: PolicyRef) -> CiPolicy:
        """The `ci` section of the policy the run was gated by, as the incident recorded it."""
        try:
            return parse_policy(artifacts.get(ref.artifact), f"policy {ref.name}").ci
        except (ArtifactNotFound, ArtifactCorrupted, ArtifactStoreUnavailable, PolicyError) as exc:
            log.warning("the recorded policy %s is unreadable (%s): CI results by the defaults", ref.name, exc)
            return CiPolicy()

    def verdict(incident_id: str, run_id: str) -> Verdict:
        if not ledger:
            ledger.append(LedgerStore(settings.ledger_url))
        rows = ledger[0].incident_events(incident_id)
        events = [open_envelope(row.envelope.encode(), runtime.registry) for row in rows]
        governing = governing_policy(events, run_id)
        return verdict_of(
            incident_id,
            run_id,
            events,
            dead_letters=dead_letters.of_run(incident_id, run_id),
            ci=ci_policy(governing) if governing is not None else None,
            now=datetime.now(UTC),
            stuck_after_s=ingest.stuck_after_s,
        )

    return IngestPorts(token, artifacts, metric_for, sign, publish, verdict, policies.submit)


def attach_ingestion(runtime: ServiceRuntime, secrets: Mapping[str, str]) -> None:
    """Serve the ingestion endpoint while the service runs, when MODELGUARD_INGEST_PORT is set; its token is read
    from ``secrets``."""
    ingest = runtime.settings.ingest
    if ingest is None:
        return
    token = ingest_token(secrets)
    dead_letters = DeadLetterLog.of(runtime.state, runtime.definition.name)
    watch_dead_letters(runtime, dead_letters)
    app = ingestion_app(ingestion_ports(runtime, ingest, token, dead_letters))
    config = uvicorn.Config(app, host=ingest.host, port=ingest.port, log_level="warning", access_log=False)
    server = _Server(config)
    serving: list[asyncio.Task[None]] = []

    async def start() -> None:
        serving.append(asyncio.create_task(server.serve()))
        log.info("ingestion endpoint on %s:%d", ingest.host, ingest.port)

    async def stop() -> None:
        server.should_exit = True
        await asyncio.gather(*serving, return_exceptions=True)

    runtime.app.after_startup(start)
    runtime.app.on_shutdown(stop)
