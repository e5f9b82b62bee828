"""`open_envelope` (its quick reading first) gives what the strict reading gives, for every envelope of a real run,
for the same events as their one-minor-older writers signed them, for a newer minor, for each kind of damage, and
for random damage to every byte position: the same event, or the same refusal with the same reason."""

from __future__ import annotations

import base64
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from contracts.envelope import EVENT_PAYLOAD_TYPE
from contracts.registry import contract_for
from libs.canonical_json import canonical_bytes
from libs.events.codec import MalformedMessage, SignedEvent, open_envelope
from libs.events.quick_reading import open_quickly
from libs.events.strict_reading import open_strictly
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
        assert _outcome(open_envelope, raw, registry) == _outcome(open_strictly, raw, registry)
        meta = json.loads(base64.b64decode(json.loads(raw)["payload"]))["meta"]
        if int(meta["event_version"].split(".")[0]) < contract_for(meta["event_type"]).major:
            # an event of a past major (EvaluationReported 1.x) is checked against its writer's model and upcast:
            # the strict reading's way, which the quick one hands it to
            assert open_quickly(raw, registry) is None
            past_major += 1
        else:
            assert open_quickly(raw, registry) is not None  # on the quick path, not by falling back
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

    assert _outcome(open_envelope, raw, keys.registry) == _outcome(open_strictly, raw, keys.registry)
    if damage == "infinity as text, signed":
        assert _outcome(open_envelope, raw, keys.registry)[1][0] in {"schema-violation", "non-canonical-payload"}  # type: ignore[index]
    if damage.startswith("a number JSON cannot carry"):  # refused as JSON, before any signature is read
        assert _outcome(open_envelope, raw, keys.registry)[1][0] == "bad-payload"  # type: ignore[index]
    opens = ("untouched", "not canonical", "a stranger's signature first")
    assert (open_quickly(raw, keys.registry) is not None) == (damage in opens)


def _damaged(data: bytes, rng: random.Random) -> bytes:
    """`data` with one random change: a byte replaced, removed, repeated or put before it, whitespace put before it,
    or the bytes cut short; at any position, or (half the time) at one of JSON's structural characters, where a
    change can leave the JSON valid and change only its form."""
    structural = [i for i, byte in enumerate(data) if byte in b'{}[]",:']
    at = rng.choice(structural) if structural and rng.random() < 0.5 else rng.randrange(len(data))
    byte = bytes([rng.choice(b'{}[]",:0123456789.eE-+ \t\naAzZ\\/\x00\xff')])
    kind = rng.randrange(6)
    if kind == 5:  # whitespace JSON allows between tokens, and canonical JSON never writes
        return data[:at] + rng.choice([b" ", b"\n", b"\t"]) + data[at:]
    if kind == 0:
        return data[:at] + byte + data[at + 1 :]
    if kind == 1:
        return data[:at] + data[at + 1 :]
    if kind == 2:
        return data[: at + 1] + data[at:]
    if kind == 3:
        return data[:at] + byte + data[at:]
    return data[:at]


def test_random_damage_to_envelopes_and_signed_payloads_opens_or_is_refused_alike() -> None:
    """Damage no one chose: each event of an incident, its envelope bytes or its payload (signed again by its
    producer, so the damage reaches the reading of the event), changed at random positions. Whatever the strict
    reading opens, `open_envelope` opens as the same event; whatever it refuses, `open_envelope` refuses with the
    same reason and detail."""
    keys = SampleKeys.generate()
    rng = random.Random(20261206)
    outcomes: dict[str, int] = {}
    for signed in repaired_incident(keys, "random-damage"):
        payload = base64.b64decode(signed.envelope.payload)
        producer_key = keys.keys[signed.event.meta.producer]
        for _ in range(40):
            raw = _damaged(signed.envelope_bytes, rng)
            strictly = _outcome(open_strictly, raw, keys.registry)
            assert _outcome(open_envelope, raw, keys.registry) == strictly, raw[:200]
            _count(outcomes, strictly)
        for _ in range(40):
            envelope = sign_envelope(_damaged(payload, rng), EVENT_PAYLOAD_TYPE, producer_key)
            raw = canonical_bytes(envelope.model_dump(mode="json"))
            strictly = _outcome(open_strictly, raw, keys.registry)
            assert _outcome(open_envelope, raw, keys.registry) == strictly, raw[:200]
            _count(outcomes, strictly)
    # the damage reached every stage of the reading, and some of it was harmless (a changed character in a free-text
    # field, signed again, is a valid event; whitespace between the envelope's tokens is allowed)
    stages = {"not-json", "bad-payload", "bad-signature", "schema-violation", "non-canonical-payload", "opened"}
    assert stages <= set(outcomes), outcomes


def _count(outcomes: dict[str, int], outcome: tuple[str, Any]) -> None:
    name = outcome[0] if outcome[0] == "opened" else outcome[1][0]
    outcomes[name] = outcomes.get(name, 0) + 1
