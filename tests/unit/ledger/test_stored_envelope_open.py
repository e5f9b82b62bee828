"""The audit's opener gives what `open_envelope` gives, for every envelope of a real run, for the same events as
their one-minor-older writers signed them, for a newer minor, and for each kind of damage: the same event, or the
same refusal with the same reason."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import pytest

from contracts.envelope import EVENT_PAYLOAD_TYPE
from contracts.registry import contract_for
from libs.canonical_json import canonical_bytes
from libs.events.codec import MalformedMessage, SignedEvent, open_envelope
from libs.ledger.stored_envelope import _opened, open_stored
from libs.signing.dsse import sign_envelope
from libs.signing.keys import KeyRegistry
from tests.support.sample_events import SampleKeys, repaired_incident

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "envelope-corpus"


def _outcome(opener: Any, raw: bytes, registry: KeyRegistry) -> tuple[str, object]:
    try:
        signed: SignedEvent = opener(raw, registry)
    except MalformedMessage as exc:
        return "refused", (exc.reason, exc.detail)
    return "opened", (signed.event, signed.envelope, signed.envelope_bytes, signed.signer)


def _corpus(name: str) -> list[bytes]:
    lines = (CORPUS / name).read_text().splitlines()
    return [json.loads(line)["envelope"].encode() for line in lines if line.strip()]


def test_every_envelope_of_a_real_run_and_its_older_minor_form_opens_alike() -> None:
    registry = KeyRegistry.from_document(json.loads((CORPUS / "registry.json").read_text()))
    envelopes = _corpus("envelopes.jsonl") + _corpus("older-minor.jsonl")
    assert len(envelopes) > 16
    past_major = 0
    for raw in envelopes:
        assert _outcome(open_stored, raw, registry) == _outcome(open_envelope, raw, registry)
        meta = json.loads(base64.b64decode(json.loads(raw)["payload"]))["meta"]
        if int(meta["event_version"].split(".")[0]) < contract_for(meta["event_type"]).major:
            # an event of a past major (EvaluationReported 1.x) is checked against its writer's model and upcast:
            # open_envelope's way, which the audit's path hands it to
            assert _opened(raw, registry) is None
            past_major += 1
        else:
            assert _opened(raw, registry) is not None  # on the audit's own path, not by falling back
    assert 0 < past_major < len(envelopes)


def _resigned(keys: SampleKeys, signed: SignedEvent, change: Any) -> bytes:
    document = json.loads(base64.b64decode(signed.envelope.payload))
    change(document)
    envelope = sign_envelope(canonical_bytes(document), EVENT_PAYLOAD_TYPE, keys.keys[signed.event.meta.producer])
    return canonical_bytes(envelope.model_dump(mode="json"))


def _with(path: tuple[str, ...], value: object) -> Any:
    def change(document: dict[str, Any]) -> None:
        for key in path[:-1]:
            document = document[key]
        document[path[-1]] = value

    return change


@pytest.mark.parametrize(
    "damage",
    [
        "untouched",
        "flipped payload byte",
        "flipped signature",
        "unknown key",
        "other producer's key",
        "not json",
        "not canonical",
        "wrong payload type",
        "newer minor",
        "newer major",
        "unknown type",
        "schema violation",
        "payload not canonical",
        "a stranger's signature first",
        "a number JSON cannot carry",
        "a number JSON cannot carry, signed",
        "infinity as text, signed",
    ],
)
def test_damaged_envelopes_are_refused_alike(damage: str) -> None:
    keys = SampleKeys.generate()
    # the evaluation's metrics are numbers with no bounds, where infinity passes the schema
    signed = repaired_incident(keys, "open")[0 if "JSON cannot carry" in damage or "infinity" in damage else 2]
    raw = signed.envelope_bytes
    envelope = json.loads(raw)
    if damage == "flipped payload byte":
        payload = bytearray(base64.b64decode(envelope["payload"]))
        payload[30] ^= 1
        envelope["payload"] = base64.b64encode(bytes(payload)).decode()
        raw = canonical_bytes(envelope)
    elif damage == "flipped signature":
        envelope["signatures"][0]["sig"] = base64.b64encode(b"\1" * 64).decode()
        raw = canonical_bytes(envelope)
    elif damage == "unknown key":
        envelope["signatures"][0]["keyid"] = "ed25519:0000000000000000"
        raw = canonical_bytes(envelope)
    elif damage == "other producer's key":
        other = sign_envelope(base64.b64decode(envelope["payload"]), EVENT_PAYLOAD_TYPE, keys.keys["publisher"])
        raw = canonical_bytes(other.model_dump(mode="json"))
    elif damage == "not json":
        raw = raw[:-1]
    elif damage == "not canonical":
        raw = json.dumps(envelope, indent=1).encode()
    elif damage == "wrong payload type":
        raw = canonical_bytes({**envelope, "payloadType": "application/json"})
    elif damage == "newer minor":
        raw = _resigned(keys, signed, _with(("meta", "event_version"), "1.9"))
    elif damage == "newer major":
        raw = _resigned(keys, signed, _with(("meta", "event_version"), "2.0"))
    elif damage == "unknown type":
        raw = _resigned(keys, signed, _with(("meta", "event_type"), "Nonsense"))
    elif damage == "schema violation":
        raw = _resigned(keys, signed, _with(("payload", "confidence"), "high"))
    elif damage == "payload not canonical":
        indented = json.dumps(json.loads(base64.b64decode(envelope["payload"])), indent=1).encode()
        other = sign_envelope(indented, EVENT_PAYLOAD_TYPE, keys.keys[signed.event.meta.producer])
        raw = canonical_bytes(other.model_dump(mode="json"))
    elif damage == "a stranger's signature first":  # a key id JSON must escape: the envelope still opens
        stranger = {"keyid": 'ed25519:"who"\\', "sig": base64.b64encode(b"\2" * 64).decode()}
        raw = canonical_bytes({**envelope, "signatures": [stranger, *envelope["signatures"]]})

    elif damage.startswith("a number JSON cannot carry"):  # 1e999 reads as infinity: no canonical JSON holds it
        payload = base64.b64decode(envelope["payload"]).decode()
        number = re.search(r'":(\d+\.\d+)[,}]', payload)
        assert number is not None
        infinite = (payload[: number.start(1)] + "1e999" + payload[number.end(1) :]).encode()
        if damage.endswith("signed"):
            other = sign_envelope(infinite, EVENT_PAYLOAD_TYPE, keys.keys[signed.event.meta.producer])
            raw = canonical_bytes(other.model_dump(mode="json"))
        else:
            raw = canonical_bytes({**envelope, "payload": base64.b64encode(infinite).decode()})

    elif damage == "infinity as text, signed":  # a float field takes "inf" from text: no canonical JSON of it
        raw = _resigned(keys, signed, _with(("payload", "claimed", "baseline", "roc_auc"), "inf"))

    assert _outcome(open_stored, raw, keys.registry) == _outcome(open_envelope, raw, keys.registry)
    if damage == "infinity as text, signed":
        assert _outcome(open_envelope, raw, keys.registry)[1][0] in {"schema-violation", "non-canonical-payload"}  # type: ignore[index]
    if damage.startswith("a number JSON cannot carry"):  # refused as JSON, before any signature is read
        assert _outcome(open_envelope, raw, keys.registry)[1][0] == "bad-payload"  # type: ignore[index]
    opens = ("untouched", "not canonical", "a stranger's signature first")
    assert (_opened(raw, keys.registry) is not None) == (damage in opens)
