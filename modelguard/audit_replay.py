"""`modelguard replay`: rebuild every incident's projection from the log, show them, and write them down."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from libs.ledger import IncidentProjection, LedgerStore, replay
from libs.signing.keys import KeyRegistry

PROJECTIONS_FILE = "projections.json"


def rebuild_projections(store: LedgerStore, registry: KeyRegistry) -> dict[str, IncidentProjection]:
    """Every envelope's signature is checked on the way; one that fails stops the replay (MalformedMessage)."""
    return replay(store, registry)


def projections_document(projections: Mapping[str, IncidentProjection], head_position: int) -> dict[str, Any]:
    """What is written: the ledger position the projections are up to, and one projection per incident."""
    return {
        "ledger_position": head_position,
        "incidents": {i: projections[i].model_dump(mode="json") for i in sorted(projections)},
    }


def write_projections(path: Path, document: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.incoming")
    staging.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    staging.replace(path)


def projection_table(projections: Mapping[str, IncidentProjection]) -> list[str]:
    lines = [f"{'incident':20} {'status':17} {'phase':9} {'events':>6}  {'metric':28} {'last event':18} model"]
    for incident_id in sorted(projections):
        p = projections[incident_id]
        lines.append(
            f"{incident_id:20} {p.status:17} {p.phase:9} {p.event_count:>6}  {_metric(p):28} "
            f"{p.last_event_type:18} {p.model_urn or '-'}"
        )
    return lines


def _metric(p: IncidentProjection) -> str:
    if p.metric is None or p.baseline is None or p.candidate is None:
        return "-"
    after = f" -> {p.after_repair:.4f}" if p.after_repair is not None else ""
    return f"{p.metric} {p.baseline:.4f} -> {p.candidate:.4f}{after}"
