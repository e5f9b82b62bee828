"""A signature's base64 is read strictly: the honest envelope verifies, and the same signature with characters
outside base64's alphabet slipped in (which a lenient decoder skips, giving the same bytes) is refused, so one
signature has one accepted spelling."""

from __future__ import annotations

import pytest

from contracts.envelope import DsseEnvelope, DsseSignature
from libs.signing.dsse import SignatureError, sign_envelope, verify_envelope
from libs.signing.keys import KeyRegistry, RegisteredKey, generate_key


def _signed() -> tuple[DsseEnvelope, KeyRegistry]:
    key = generate_key("detector")
    registry = KeyRegistry([RegisteredKey(key.keyid, "detector", key.private_key.public_key())])
    return sign_envelope(b'{"hello":"world"}', "application/vnd.test+json", key), registry


def test_the_honest_signature_verifies() -> None:
    envelope, registry = _signed()
    assert verify_envelope(envelope, registry, expected_owner="detector") == "detector"


@pytest.mark.parametrize("junk", ["\n", " ", "!", "*"])
def test_a_signature_with_characters_outside_base64_is_refused(junk: str) -> None:
    envelope, registry = _signed()
    sig = envelope.signatures[0].sig
    spelled = DsseSignature(keyid=envelope.signatures[0].keyid, sig=sig[:10] + junk + sig[10:])
    changed = envelope.model_copy(update={"signatures": [spelled]})
    with pytest.raises(SignatureError, match="bad signature"):
        verify_envelope(changed, registry, expected_owner="detector")
