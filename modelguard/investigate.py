"""`modelguard investigate`: the whole pipeline on one bundle in one process, no broker — for a model's CI job.

Each of the stack's seven services is built by its composition root (``services/<name>/bootstrap.py``) as its process
builds it and runs its own runtime (``libs/bus/runtime.py``) over an in-memory Kafka
(``libs/bus/in_memory_kafka.py``, ``in_memory_services.py``) instead of a broker. So every event crosses the byte
boundary it crosses on the stack: signed by its producer's key, published with its headers, read back as bytes, its
signature and schema checked, deduplicated by event id, retried from its offset on a transient failure, dead-lettered
with a reason when refused; the ledger service appends every event and seals a signed checkpoint over them when it
stops. What is not done here: DataHub's MCL topics are not read (the bundle brings its own DataHub files), and no
health server, ready file or broker watch runs. The payloads, event for event, are the stack's
(``tests/e2e/test_transport_parity.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contracts.registry import CONTRACTS, DEAD_LETTER_TOPIC
from libs.bundle.load import Bundle, load_bundle
from libs.bus.dead_letters import DeadLetter, dead_letter_of
from libs.bus.in_memory_kafka import InMemoryKafka
from libs.bus.in_memory_services import Extension, services_in_memory
from libs.bus.producer import send_signed
from libs.bus.runtime import ServiceDefinition
from libs.events.codec import MalformedMessage, SignedEvent, open_envelope
from libs.observability.log_format import formatter_for
from libs.policy.ci import CiPolicy
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.policy.model_policy import parse_policy
from libs.settings import Settings
from libs.signing.keys import KeyRegistry, SigningKey, load_private_key, provision_keys
from modelguard.stack import CLIENTS, REPO_ROOT, SERVICES
from modelguard.submit import evaluate_and_sign
from services.ledger.dead_letter_keeping import keep_dead_letters

Dispatched = Callable[[SignedEvent], None]
EVENT_TOPICS = frozenset(topic for contract in CONTRACTS.values() for topic in contract.topics)
EXTENSIONS: dict[str, Extension] = {"ledger": keep_dead_letters}
"""What a service's process adds to its runtime that belongs to the transport (``services/<name>/main.py``): the
ledger keeps every dead letter in its database, where the console reads them. The detector's HTTP ingestion does
not: CI's evaluation is the input here."""


class InvestigationRefused(RuntimeError):
    """A service dead-lettered an input of the investigation; the message names the first one, in one line."""


@dataclass(frozen=True)
class InMemoryRun:
    events: list[SignedEvent]
    """Every event published, verified again, in the order it was published (a re-sent output once)."""
    dead_letters: list[DeadLetter]


def built_services(
    settings: Settings, names: Sequence[str] | None = None
) -> list[tuple[ServiceDefinition, SigningKey]]:
    """Each service's definition and key, as its process builds them, the ledger last (it stops last, so its
    checkpoint covers everything); without DataHub's MCL input (a bundle is investigated, not DataHub's stream)."""
    chosen = [name for name in (names or SERVICES) if name != "ledger"]
    if "ledger" in (names or SERVICES):
        chosen.append("ledger")
    built = []
    for name in chosen:
        key = load_private_key(name, settings.keys_dir / f"{name}.key")
        definition = importlib.import_module(f"services.{name}.bootstrap").bootstrap(settings, key)
        built.append((dataclasses.replace(definition, external=()), key))
    return built


def run_in_memory(
    settings: Settings,
    services: Sequence[tuple[ServiceDefinition, SigningKey]],
    first: Sequence[SignedEvent],
    on_event: Dispatched = lambda _event: None,
) -> InMemoryRun:
    """Publish ``first`` to the services over a new in-memory Kafka, and return once each service has handled
    everything that followed (the services then stop); ``on_event`` is told of each event as it is published."""
    registry = KeyRegistry.load(settings.key_registry_path)
    seen: dict[str, SignedEvent] = {}

    def observe(record: Any) -> None:
        if record.topic not in EVENT_TOPICS:
            return
        try:
            signed = open_envelope(record.value, registry)
        except MalformedMessage:
            return  # its consumers dead-letter it
        if signed.event.meta.event_id not in seen:
            seen[signed.event.meta.event_id] = signed
            on_event(signed)

    async def run() -> list[DeadLetter]:
        cluster = InMemoryKafka(observe)
        async with services_in_memory(cluster, services, settings, registry, EXTENSIONS):
            producer = cluster.producer()
            await producer.start()
            await send_signed(producer, first)
            await cluster.settled()
        return [dead_letter_of(r.key, r.value, r.headers) for r in cluster.records(DEAD_LETTER_TOPIC)]

    dead_letters = asyncio.run(run())
    return InMemoryRun(list(seen.values()), dead_letters)


def install_bundle_inputs(settings: Settings, bundle: Bundle) -> Settings:
    """The bundle's effective policy in the policy folder, and its DataHub files as the context's source (named
    relative to the repository when inside it, as the stack's services name them, and read there)."""
    settings.policy_dir.mkdir(parents=True, exist_ok=True)
    policy = effective_policy_bytes(bundle, read_central_policy(settings.central_policy))
    (settings.policy_dir / f"{bundle.name}.yaml").write_bytes(policy)
    return dataclasses.replace(
        settings,
        datahub_files=(_as_in_stack(bundle.metadata_file),) if bundle.metadata_file else settings.datahub_files,
        datahub_change_files=(_as_in_stack(bundle.changes_file),) if bundle.changes_file else (),
        datahub_root=REPO_ROOT,
    )


def ci_policy_for(settings: Settings, bundle: Bundle) -> CiPolicy:
    """The CI result of each outcome, as the bundle's effective policy (the one its incident records) says."""
    policy = effective_policy_bytes(bundle, read_central_policy(settings.central_policy))
    return parse_policy(policy, f"the effective policy of {bundle.name}").ci


def _as_in_stack(path: Path) -> Path:
    """Relative to the repository when inside it, as the stack's services name it (provenance is digested)."""
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path


def refusal(letter: DeadLetter, events: Sequence[SignedEvent]) -> str:
    """One line: which service refused what, and why."""
    refused = next((e for e in events if e.envelope_bytes == letter.value), None)
    what = f"{refused.event.meta.event_type} {refused.event.meta.event_id}" if refused else letter.source
    detail = " ".join(letter.detail.split())[:300]
    return f"{letter.service} dead-lettered {what}: {letter.reason}" + (f": {detail}" if detail else "")


@contextmanager
def services_log(path: Path, log_format: str | None = None) -> Iterator[None]:
    """While the services run: their log lines (the runtimes', FastStream's, the handlers') go to ``path``, as each
    stack service's go to its own log file, and none to stderr, which keeps the command's own lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    with path.open("a", encoding="utf-8") as stream:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(formatter_for("investigate", stream, log_format))
        handler.setLevel(logging.INFO)
        level = root.level
        root.addHandler(handler)
        root.setLevel(min(level, logging.INFO) if level else logging.INFO)
        try:
            yield
        finally:
            root.removeHandler(handler)
            root.setLevel(level)


def investigate(
    settings: Settings, bundle_dir: Path, run_id: str, pull_request: int | None, on_event: Dispatched
) -> list[SignedEvent]:
    """The bundle's evaluation signed as its CI would sign it, then every phase over the in-memory transport; the
    events in the order they were published. Raises InvestigationRefused when a service dead-lettered one. The
    services' log lines go to ``<home>/logs/investigate.log``."""
    bundle = load_bundle(bundle_dir)
    settings.home.mkdir(parents=True, exist_ok=True)
    provision_keys([*SERVICES, *CLIENTS], settings.keys_dir)
    settings = install_bundle_inputs(settings, bundle)
    reported = evaluate_and_sign(settings, bundle.root, run_id, pull_request)
    log_file = settings.home / "logs" / "investigate.log"
    with services_log(log_file, settings.logging.format):
        run = run_in_memory(settings, built_services(settings), [reported.signed], on_event)
    if run.dead_letters:
        refused = refusal(run.dead_letters[0], run.events)
        raise InvestigationRefused(f"{bundle.name}: {refused} (the services' log: {log_file})")
    return run.events
