"""Deterministic identifiers: the same inputs always name the same incident and the same event."""

from __future__ import annotations

from collections.abc import Iterable

from libs.canonical_json import canonical_bytes, sha256_hex


def event_id_for(producer: str, incident_id: str, event_type: str, inputs: Iterable[str]) -> str:
    return sha256_hex(canonical_bytes([producer, incident_id, event_type, sorted(inputs)]))[:32]


def incident_id_for(*fingerprint: str) -> str:
    """An incident is named by what went wrong (e.g. model, commits, metric), not by when it was seen."""
    return "inc-" + sha256_hex(canonical_bytes(list(fingerprint)))[:16]
