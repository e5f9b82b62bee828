"""The demo's second act: an upstream schema change arrives from DataHub as an MCL and ModelGuard names the
models and live deployments it puts at risk."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from libs.ledger import LedgerStore
from libs.settings import Settings
from libs.signing.keys import KeyRegistry
from modelguard.emit_mcl import OFFLINE_SCHEMA_ID, emit_change, encode_change
from modelguard.incident_log import WaitTimedOut, incident_events


def _published_risk(store: LedgerStore, registry: KeyRegistry, asset_urn: str) -> dict[str, Any] | None:
    for head in store.incidents():
        events = incident_events(store, head.incident_id, registry)
        risks = [e.event.payload for e in events if e.event.meta.event_type == "UpstreamRiskDetected"]
        published = [e.event.payload for e in events if e.event.meta.event_type == "Published"]
        if risks and published and risks[0].asset_urn == asset_urn:
            risk = risks[0]
            return {
                "incident_id": head.incident_id,
                "cause": risk.cause,
                "asset": risk.asset_urn,
                "summary": risk.change_summary,
                "models": sorted({a.model_urn for a in risk.affected}),
                "deployments": sorted({d for a in risk.affected for d in a.deployments}),
                "owners": sorted({o for a in risk.affected for o in a.owners}),
                "publication": {c.channel: c.status for c in published[-1].channels},
            }
    return None


def run_upstream_act(
    settings: Settings, bootstrap: str, change: Path, metadata: list[Path], timeout_s: float = 120.0
) -> dict[str, Any]:
    data, urn = encode_change(change, metadata, OFFLINE_SCHEMA_ID)
    emit_change(bootstrap, settings.mcl_topics[0], data, urn)
    store, registry = LedgerStore(settings.ledger_url), KeyRegistry.load(settings.key_registry_path)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = _published_risk(store, registry, urn)
        if found:
            return found
        time.sleep(0.25)
    raise WaitTimedOut(f"no upstream risk for {urn} was published within {timeout_s:.0f}s")
