"""Signed envelopes: what verifies, and the reason given for everything that does not."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable

import pytest

from contracts.envelope import EVENT_PAYLOAD_TYPE, DsseEnvelope, DsseSignature
from libs.canonical_json import canonical_bytes
from libs.events.codec import MalformedMessage, SignedEvent, envelope_bytes, event_bytes, open_envelope, seal
from libs.events.strict_reading import open_strictly
from libs.signing.dsse import SignatureError, sign_envelope
from libs.signing.keys import KeyRegistry
from tests.support.sample_events import Keys, detected, reported


@pytest.fixture
def keys() -> Keys:
    return Keys("reporter", "detector")


def test_round_trip_keeps_event_and_digest(keys: Keys) -> None:
    signed = reported(keys)
    opened = open_envelope(signed.envelope_bytes, keys.registry)
    assert opened.event == signed.event
    assert opened.digest == signed.digest
    assert opened.signer == "reporter"


def test_event_ids_are_deterministic_and_chain_causes(keys: Keys) -> None:
    first, again = reported(keys), reported(keys)
    assert first.event.meta.event_id == again.event.meta.event_id
    assert reported(keys, run_id="run-2").event.meta.event_id != first.event.meta.event_id
    child = detected(keys, first)
    assert child.event.meta.causation_id == first.event.meta.event_id
    assert child.event.meta.input_digests == (first.digest,)
    assert child.event.meta.incident_id == first.event.meta.incident_id


def _tamper(raw: bytes, mutate) -> bytes:  # type: ignore[no-untyped-def]
    envelope = json.loads(raw)
    event = json.loads(base64.b64decode(envelope["payload"]))
    mutate(event)
    envelope["payload"] = base64.b64encode(json.dumps(event, sort_keys=True, separators=(",", ":")).encode()).decode()
    return json.dumps(envelope).encode()


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (b"\xff\xfe not json", "not-json"),
        (b'{"payloadType": "x"}', "not-an-envelope"),
        (b"[1, 2]", "not-an-envelope"),
        (b'{"a": NaN}', "not-json"),
    ],
)
def test_garbage_is_refused_with_a_reason(keys: Keys, raw: bytes, reason: str) -> None:
    with pytest.raises(MalformedMessage) as caught:
        open_envelope(raw, keys.registry)
    assert caught.value.reason == reason


def test_a_changed_payload_fails_the_signature(keys: Keys) -> None:
    raw = _tamper(reported(keys).envelope_bytes, lambda e: e["payload"]["claimed"]["candidate"].update(f1=0.9))
    with pytest.raises(MalformedMessage) as caught:
        open_envelope(raw, keys.registry)
    assert caught.value.reason == "bad-signature"


def test_an_unknown_key_and_a_foreign_key_are_refused(keys: Keys) -> None:
    stranger = Keys("reporter")
    with pytest.raises(MalformedMessage, match="unknown key"):
        open_envelope(reported(stranger).envelope_bytes, keys.registry)
    # a registered detector key cannot vouch for an event that says the reporter produced it
    claimed = reported(keys)
    with pytest.raises(SignatureError):
        seal(claimed.event, keys["detector"])
    forged = sign_envelope(event_bytes(claimed.event), EVENT_PAYLOAD_TYPE, keys["detector"])
    with pytest.raises(MalformedMessage, match="belongs to detector"):
        open_envelope(envelope_bytes(forged), keys.registry)


def test_a_valid_signature_over_a_wrong_schema_is_a_schema_violation(keys: Keys) -> None:
    document = reported(keys).event.model_dump(mode="json")
    document["payload"]["claimed"] = "not a claim"
    envelope = sign_envelope(json.dumps(document).encode(), EVENT_PAYLOAD_TYPE, keys["reporter"])
    with pytest.raises(MalformedMessage) as caught:
        open_envelope(envelope.model_dump_json().encode(), keys.registry)
    assert caught.value.reason == "schema-violation"


_ENVELOPE_TEXTS = ["", "a", "QUJD+/==", 'he said "no"', "back\\slash", "tab\there", "\x00", "\x1f", "\x7f", "é"]
_ENVELOPE_TEXTS += ["\u2028", "\U0001f600"]


@pytest.mark.parametrize("text", _ENVELOPE_TEXTS)
def test_envelope_bytes_are_the_canonical_json_of_the_envelope(text: str) -> None:
    """Plain strings are written out directly; anything a JSON writer escapes or may escape goes through
    canonical_bytes. Either way the bytes are canonical_bytes' own."""
    signatures = [DsseSignature(keyid=f"k{text}", sig=f"{text}sig"), DsseSignature(keyid="k2", sig="c2lnMg==")]
    for envelope in (
        DsseEnvelope.model_construct(payloadType=f"t/{text}", payload=f"{text}cGF5", signatures=signatures),
        DsseEnvelope.model_construct(payloadType=EVENT_PAYLOAD_TYPE, payload=text or "x", signatures=signatures[1:]),
    ):
        assert envelope_bytes(envelope) == canonical_bytes(envelope.model_dump(mode="json"))


@pytest.mark.parametrize("opener", [open_envelope, open_strictly])
def test_opening_decodes_the_payload_once(
    keys: Keys, monkeypatch: pytest.MonkeyPatch, opener: Callable[[bytes, KeyRegistry], SignedEvent]
) -> None:
    signed = reported(keys)
    decoded: list[int] = []
    real = binascii.a2b_base64  # what base64.b64decode calls too

    def counting(data: str | bytes, *args: object, **kwargs: object) -> bytes:
        decoded.append(len(data))
        return real(data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(binascii, "a2b_base64", counting)
    opener(signed.envelope_bytes, keys.registry)
    assert sorted(decoded)[-1] == len(signed.envelope.payload)
    assert decoded.count(len(signed.envelope.payload)) == 1
