"""`modelguard investigate`: the whole pipeline in one process, no broker — for a model's CI job.

The same plain handlers the service processes run, built from each service's wiring, called by a local
dispatcher in topic order; every event is signed by its producer's key and appended to the ledger, so the
incident can be verified and replayed exactly like one that went through Kafka.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
from collections import deque
from collections.abc import Callable
from pathlib import Path

from libs.bundle.effective_policy import effective_policy_bytes, read_central_policy
from libs.bundle.load import Bundle, load_bundle
from libs.bus.runtime import ServiceDefinition, handle_and_seal
from libs.ci_policy import CiPolicy
from libs.events.codec import SignedEvent
from libs.ledger import LedgerStore
from libs.policy import parse_policy
from libs.settings import Settings
from libs.signing.keys import SigningKey, load_private_key, provision_keys
from modelguard.stack import CLIENTS, REPO_ROOT, SERVICES
from modelguard.submit import evaluate_and_sign

PIPELINE = tuple(s for s in SERVICES if s != "ledger")
Dispatched = Callable[[SignedEvent], None]


def _definitions(settings: Settings) -> list[tuple[ServiceDefinition, SigningKey]]:
    built = []
    for name in PIPELINE:
        key = load_private_key(name, settings.keys_dir / f"{name}.key")
        built.append((importlib.import_module(f"services.{name}.wiring").definition(settings, key), key))
    return built


def dispatch(first: SignedEvent, services: list[tuple[ServiceDefinition, SigningKey]], on_event: Dispatched) -> None:
    """Breadth-first, like the topics: each event goes to every service that consumes its type."""
    queue = deque([first])
    while queue:
        event = queue.popleft()
        on_event(event)
        for definition, key in services:
            if event.event.meta.event_type in definition.consumes:
                queue.extend(handle_and_seal(definition, key, event))


def install_bundle_inputs(settings: Settings, bundle: Bundle) -> Settings:
    """The bundle's effective policy in the policy folder, and its DataHub files as the context's source."""
    settings.policy_dir.mkdir(parents=True, exist_ok=True)
    policy = effective_policy_bytes(bundle, read_central_policy(settings.central_policy))
    (settings.policy_dir / f"{bundle.name}.yaml").write_bytes(policy)
    return dataclasses.replace(
        settings,
        datahub_files=(_as_in_stack(bundle.metadata_file),) if bundle.metadata_file else settings.datahub_files,
        datahub_change_files=(_as_in_stack(bundle.changes_file),) if bundle.changes_file else (),
    )


def ci_policy_for(settings: Settings, bundle: Bundle) -> CiPolicy:
    """The CI result of each outcome, as the bundle's effective policy (the one its incident records) says."""
    policy = effective_policy_bytes(bundle, read_central_policy(settings.central_policy))
    return parse_policy(policy, f"the effective policy of {bundle.name}").ci


def _as_in_stack(path: Path) -> Path:
    """Relative to the repository when inside it, as the stack's services name it (provenance is digested)."""
    return path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path


def investigate(
    settings: Settings, bundle_dir: Path, run_id: str, pull_request: int | None, on_event: Dispatched
) -> list[SignedEvent]:
    bundle = load_bundle(bundle_dir)
    settings.home.mkdir(parents=True, exist_ok=True)
    provision_keys([*SERVICES, *CLIENTS], settings.keys_dir)
    settings = install_bundle_inputs(settings, bundle)
    store = LedgerStore(settings.ledger_url)
    store.create_schema()
    events: list[SignedEvent] = []

    def record(event: SignedEvent) -> None:
        store.append(event)
        events.append(event)
        on_event(event)

    reported = evaluate_and_sign(settings, bundle.root, run_id, pull_request)
    with contextlib.chdir(REPO_ROOT):  # relative DataHub file paths resolve as in the service processes
        dispatch(reported.signed, _definitions(settings), record)
    return events
