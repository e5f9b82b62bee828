"""Stored envelopes back to typed events."""

from __future__ import annotations

from typing import Any

from contracts.envelope import DsseEnvelope
from contracts.registry import Event, parse_event
from libs.canonical_json import strict_loads
from libs.events.codec import MalformedMessage, open_envelope
from libs.ledger.rows import LedgerRow
from libs.signing.dsse import SignatureError, decode_payload
from libs.signing.keys import KeyRegistry


def decode_row(row: LedgerRow, registry: KeyRegistry | None = None) -> Event[Any]:
    """The row's event; its signature is checked when a registry is given. Raises MalformedMessage."""
    if registry is not None:
        return open_envelope(row.envelope_bytes, registry).event
    try:
        envelope = DsseEnvelope.model_validate_json(row.envelope)
        payload = decode_payload(envelope)
        return parse_event(strict_loads(payload), payload)
    except (ValueError, SignatureError) as exc:
        raise MalformedMessage("undecodable-ledger-row", f"position {row.position}: {str(exc)[:200]}") from exc
