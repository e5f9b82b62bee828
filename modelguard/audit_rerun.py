"""`modelguard rerun`: re-execute an incident's deterministic phases from their logged inputs, compare digests.

For every logged event produced by the detector, context, diagnoser, repairer or validator, its cause is read
back from the ledger (signature checked), the producing service's plain handler is built by its composition root as the
service process builds it, and called in this process. Nothing is published and nothing is appended: the
recomputed payloads are only hashed and compared with the logged ones.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from contracts.registry import contract_of_payload
from libs.bus.handler_errors import RejectedInput
from libs.bus.runtime import ServiceDefinition
from libs.canonical_json import canonical_bytes, sha256_hex
from libs.events.codec import MalformedMessage, SignedEvent, open_envelope
from libs.ledger import LedgerStore
from libs.settings import Settings
from libs.signing.keys import KeyRegistry, load_private_key
from modelguard.audit_payload_diff import differing_paths
from modelguard.stack import REPO_ROOT, default_change_files, default_datahub_files

DETERMINISTIC_PHASES = ("detector", "context", "diagnoser", "repairer", "validator")
DefinitionOf = Callable[[str], ServiceDefinition]


@dataclass(frozen=True)
class RerunRow:
    phase: str
    event_type: str
    event_id: str
    run_id: str | None
    logged_digest: str
    rerun_digest: str | None
    note: str = ""
    skipped: bool = False
    """True for an event that has no logged cause to rerun from (an input from outside, e.g. DataHub's MCL)."""

    @property
    def equal(self) -> bool:
        return self.rerun_digest == self.logged_digest

    @property
    def failed(self) -> bool:
        return not self.equal and not self.skipped


def payload_digest(payload: BaseModel) -> str:
    """sha256 of the canonical JSON of an event payload: what is compared between the log and the rerun."""
    return sha256_hex(canonical_bytes(payload.model_dump(mode="json")))


def rerun_settings(settings: Settings, scratch_home: Path) -> Settings:
    """The settings a service process of the embedded stack sees (notably its default DataHub files, relative ones
    read in the repository, its working directory), with its private state (processed inputs, scratch folders, the
    context's metadata mirror) under `scratch_home`, so a rerun never touches the state of running services.
    Artifacts, keys and policies stay where they are."""
    if settings.datahub_files:
        return dataclasses.replace(settings, home=scratch_home, datahub_root=settings.datahub_root or REPO_ROOT)
    return dataclasses.replace(
        settings,
        home=scratch_home,
        datahub_files=default_datahub_files(),
        datahub_change_files=settings.datahub_change_files or default_change_files(),
        datahub_root=REPO_ROOT,
    )


def service_definitions(settings: Settings) -> DefinitionOf:
    """Each deterministic service's definition, built once, with its own key, by `services.<name>.bootstrap` (its
    production ports)."""
    built: dict[str, ServiceDefinition] = {}

    def definition_of(service: str) -> ServiceDefinition:
        if service not in DETERMINISTIC_PHASES:
            raise ValueError(f"{service} is not a deterministic phase")
        if service not in built:
            key = load_private_key(service, settings.keys_dir / f"{service}.key")
            composition = importlib.import_module(f"services.{service}.bootstrap")
            built[service] = composition.bootstrap(settings, key)
        return built[service]

    return definition_of


def rerun_incident(
    store: LedgerStore,
    registry: KeyRegistry,
    incident_id: str,
    definition_of: DefinitionOf,
    run_id: str | None = None,
) -> list[RerunRow]:
    """One row per logged event of a deterministic phase (of one CI run when `run_id` is given), in log order.

    Relative DataHub file paths recorded in provenance are read where the stack's service processes read them
    (``rerun_settings``: under the repository), without changing the working directory.
    """
    rows: list[RerunRow] = []
    for row in store.incident_events(incident_id):
        if row.producer not in DETERMINISTIC_PHASES:
            continue
        logged = open_envelope(row.envelope_bytes, registry)
        if run_id is not None and getattr(logged.event.payload, "run_id", None) != run_id:
            continue
        rows.append(_rerun_one(logged, store, registry, definition_of))
    return rows


def _rerun_one(logged: SignedEvent, store: LedgerStore, registry: KeyRegistry, definition_of: DefinitionOf) -> RerunRow:
    meta, logged_payload = logged.event.meta, logged.event.payload
    row = functools.partial(
        RerunRow,
        meta.producer,
        meta.event_type,
        meta.event_id,
        getattr(logged_payload, "run_id", None),
        payload_digest(logged_payload),
    )
    if meta.causation_id is None:
        return row(None, "no logged cause: its input came from outside ModelGuard", skipped=True)
    cause, problem = _logged_cause(logged, store, registry)
    if cause is None:
        return row(None, problem)
    definition = definition_of(meta.producer)
    if definition.handler is None or cause.event.meta.event_type not in definition.consumes:
        return row(None, f"{meta.producer} does not handle a {cause.event.meta.event_type} today")
    try:
        outputs = list(definition.handler(cause))
    except RejectedInput as exc:
        return row(None, f"the handler rejected its input: {exc.reason}: {exc.detail[:200]}")
    except Exception as exc:  # as in the service runtime: a failing handler is reported, it does not stop the audit
        return row(None, f"the handler failed: {type(exc).__name__}: {str(exc)[:200]}")
    same_type = [p for p in outputs if contract_of_payload(p).event_type == meta.event_type]
    if not same_type:
        produced = ", ".join(contract_of_payload(p).event_type for p in outputs) or "nothing"
        return row(None, f"the rerun produced {produced}")
    digest = payload_digest(same_type[0])
    if digest == payload_digest(logged_payload):
        return row(digest)
    paths = differing_paths(logged_payload.model_dump(mode="json"), same_type[0].model_dump(mode="json"))
    return row(digest, "differs at " + ", ".join(paths))


def _logged_cause(logged: SignedEvent, store: LedgerStore, registry: KeyRegistry) -> tuple[SignedEvent | None, str]:
    cause_id = logged.event.meta.causation_id
    cause_row = store.event(cause_id, logged.event.meta.incident_id) if cause_id else None
    if cause_row is None:
        return None, f"its cause {cause_id} is not in the ledger"
    try:
        cause = open_envelope(cause_row.envelope_bytes, registry)
    except MalformedMessage as exc:
        return None, f"its cause {cause_id} does not verify: {exc.reason}"
    if cause.digest not in logged.event.meta.input_digests:
        return None, f"the ledger's envelope of its cause {cause_id} is not the one it was computed from"
    return cause, ""


def rerun_table(rows: Sequence[RerunRow]) -> list[str]:
    lines = [f"{'phase':10} {'event':20} {'run':16} {'logged digest':16} {'rerun digest':16} equal"]
    for r in rows:
        verdict = "skipped" if r.skipped else "yes" if r.equal else "NO"
        lines.append(
            f"{r.phase:10} {r.event_type:20} {(r.run_id or '-')[:16]:16} {r.logged_digest[:16]:16} "
            f"{(r.rerun_digest or '-')[:16]:16} {verdict}" + (f"  ({r.note})" if r.note else "")
        )
    return lines
