"""One incident as two transports produced it (`investigate` in memory, the stack over Kafka), compared event for
event: the same event ids, metadata and payloads, up to what a clock wrote.

What may legitimately differ, and is normalised away by what a value is, measured on each side, not by field name:

- a clock reading: a value equal to the ``occurred_at`` of one of the run's events (an ISO 8601 string of that
  instant, or that instant in epoch milliseconds). Each side's clock stamps its own events (the reporter's when CI's
  report is signed, each service's when it publishes), and payloads copy some of them: the context snapshot's
  ``fetched_at`` is its request's ``occurred_at`` (so that a rerun gives the same snapshot), DataHub's assertion run
  and audit stamps carry the publishing event's.
- an envelope digest: the sha256 of one of the run's envelopes (``input_digests``, ``ancestry``, the attestation's
  subjects): an envelope signs its event's ``occurred_at``.
- a digest of a document that holds either (any JSON object of the run's payloads, the diagnosis report say; a
  context snapshot, ``ContextSnapshot.digest``; an artifact the side stored; a JSON document or aspect the side
  published): replaced by the digest of that document normalised the same way, so it matches exactly when the two
  documents do. An envelope carried whole as a string (an attestation's ``source_envelope``) stands for its event.
- an evidence id, wherever it appears (the evidence, the hypotheses that cite it, the report's text), when the
  evidence's values hold a clock reading: the diagnoser derives the id from what the evidence says
  (``services/diagnoser/evidence.py``: a digest of its kind, subject and values), and the change-timing evidence
  says when the regression was seen (``regression_time_ms``, its snapshot's ``fetched_at``). It is replaced by a
  token naming the evidence's kind and its values normalised.
- a signature (a DSSE envelope's ``sig``) over a payload that differs only in the above: the payload is compared,
  normalised, and the key id beside the signature too.

Each is replaced by a token naming what it stands for (the event, by type and id; the normalised document's
digest). Nothing else is excluded: ids, producers, versions, causation and every other field must be equal.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from libs.canonical_json import canonical_bytes, sha256_hex
from libs.events.codec import SignedEvent


@dataclass
class Side:
    """One transport's run: its events and the documents its digests may stand for."""

    events: list[SignedEvent]
    documents: dict[str, Any] = field(default_factory=dict)
    """sha256 hex -> the JSON document it is the digest of."""
    derived_ids: dict[str, str] = field(default_factory=dict)
    """An evidence id over values that hold a clock reading -> its token."""
    _normalised: dict[str, str] = field(default_factory=dict)

    @property
    def clocks(self) -> dict[datetime, str]:
        return {e.event.meta.occurred_at: f"<clock of {_name(e)}>" for e in self.events}

    @property
    def envelopes(self) -> dict[str, str]:
        return {e.digest.removeprefix("sha256:"): f"<envelope of {_name(e)}>" for e in self.events}

    def token(self, value: str | int) -> str | None:
        """What ``value`` stands for, when it is a clock reading or a digest; None when it is neither."""
        if isinstance(value, int):
            return next((t for at, t in self.clocks.items() if _epoch_ms(at) == value), None)
        instant = _instant(value)
        if instant is not None and instant in self.clocks:
            return self.clocks[instant]
        digest = value.removeprefix("sha256:")
        if digest in self.envelopes:
            return self.envelopes[digest]
        whole = sha256_hex(value.encode())
        if whole in self.envelopes:
            return self.envelopes[whole]
        if digest in self.documents:
            if digest not in self._normalised:
                self._normalised[digest] = sha256_hex(canonical_bytes(self.normalise(self.documents[digest])))
            return f"<digest of a document normalised to {self._normalised[digest][:16]}>"
        return None

    def normalise(self, value: Any) -> Any:
        if isinstance(value, dict):
            if _is_dsse(value):
                return _normalised_dsse(value, self)
            return {k: self.normalise(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.normalise(v) for v in value]
        if isinstance(value, bool) or not isinstance(value, str | int):
            return value
        token = self.token(value)
        if token is not None:
            return token
        if isinstance(value, str):
            for derived, derived_token in self.derived_ids.items():
                value = value.replace(derived, derived_token)
        return value

    def by_id(self) -> dict[str, SignedEvent]:
        return {e.event.meta.event_id: e for e in self.events}


def side(events: Sequence[SignedEvent], artifacts_dir: Path, publish_dir: Path) -> Side:
    """A transport's run: its events, the artifacts it stored, what it published, its context snapshots."""
    made = Side(list(events))
    for path in sorted(p for p in artifacts_dir.rglob("*") if p.is_file()):
        content = path.read_bytes()
        document = _json(content)
        if document is not None:
            made.documents[sha256_hex(content)] = document
    for path in sorted(publish_dir.rglob("*.json")):
        document = _json(path.read_bytes())
        for part in _parts(document):
            made.documents[sha256_hex(canonical_bytes(part))] = part
    for signed in events:
        for part in _parts(signed.event.payload.model_dump(mode="json")):
            made.documents.setdefault(sha256_hex(canonical_bytes(part)), part)
        context = getattr(signed.event.payload, "context", None)
        if context is not None and hasattr(context, "digest"):
            made.documents[context.digest().removeprefix("sha256:")] = context.model_dump(mode="json")
    for signed in events:
        for part in _parts(signed.event.payload.model_dump(mode="json")):
            if isinstance(part, dict) and isinstance(part.get("evidence_id"), str) and "values" in part:
                values = made.normalise(part["values"])
                if values != part["values"]:
                    digest = sha256_hex(canonical_bytes({"kind": part.get("kind"), "values": values}))[:16]
                    made.derived_ids[part["evidence_id"]] = f"<evidence id of {part.get('kind')} over {digest}>"
    return made


@dataclass(frozen=True)
class Comparison:
    event_type: str
    event_id: str
    payload_equal: bool
    """The payloads' digests are equal as they are."""
    normalised_equal: bool
    """The events (metadata and payload) are equal once normalised."""
    normalised_paths: tuple[str, ...]
    """Where the payloads differ as they are: each a clock reading or a digest over one."""


def compare(first: Side, second: Side) -> list[Comparison]:
    """Every event of ``first``, in its order, against the event of the same id in ``second``."""
    other = second.by_id()
    rows = []
    for signed in first.events:
        meta = signed.event.meta
        twin = other.get(meta.event_id)
        if twin is None:
            rows.append(Comparison(meta.event_type, meta.event_id, False, False, ("<no such event>",)))
            continue
        mine, theirs = signed.event.model_dump(mode="json"), twin.event.model_dump(mode="json")
        rows.append(
            Comparison(
                meta.event_type,
                meta.event_id,
                _digest(mine["payload"]) == _digest(theirs["payload"]),
                first.normalise(mine) == second.normalise(theirs),
                tuple(_differing(mine["payload"], theirs["payload"])),
            )
        )
    return rows


def _name(signed: SignedEvent) -> str:
    return f"{signed.event.meta.event_type} {signed.event.meta.event_id}"


def _digest(value: Any) -> str:
    return sha256_hex(canonical_bytes(value))


def _epoch_ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def _instant(value: str) -> datetime | None:
    if len(value) < 19 or not value[:4].isdigit() or value[4] != "-":
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def _json(content: bytes) -> Any:
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None


def _parts(document: Any) -> Iterator[Any]:
    """Every object and list of a JSON document, itself first."""
    if isinstance(document, dict | list):
        yield document
        for child in document.values() if isinstance(document, dict) else document:
            yield from _parts(child)


def _is_dsse(value: dict[str, Any]) -> bool:
    return {"payloadType", "payload", "signatures"} <= set(value) and isinstance(value["payload"], str)


def _normalised_dsse(envelope: dict[str, Any], made: Side) -> dict[str, Any]:
    try:
        payload = json.loads(base64.b64decode(envelope["payload"], validate=True))
    except (ValueError, binascii.Error):
        payload = envelope["payload"]
    return {
        "payloadType": envelope["payloadType"],
        "payload": made.normalise(payload),
        "signatures": [
            {"keyid": s.get("keyid"), "sig": "<signature over the payload>"} for s in envelope["signatures"]
        ],
    }


def _differing(first: Any, second: Any, path: str = "") -> Iterator[str]:
    if isinstance(first, dict) and isinstance(second, dict):
        for key in sorted(set(first) | set(second)):
            yield from _differing(first.get(key), second.get(key), f"{path}.{key}" if path else key)
    elif isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        for index, (a, b) in enumerate(zip(first, second, strict=True)):
            yield from _differing(a, b, f"{path}[{index}]")
    elif first != second:
        yield path or "<the value>"
