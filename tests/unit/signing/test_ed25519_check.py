"""The libsodium check beside OpenSSL's (`cryptography`) on honest, tampered and malformed signatures: it accepts
every honest signature, and whatever it accepts OpenSSL accepts too."""

from __future__ import annotations

import os

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from libs.signing.ed25519_check import signature_holds

# the order of Ed25519's base point: S and S + L are the same scalar, only S < L is canonical
GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493
IDENTITY = (1).to_bytes(32, "little")  # the neutral point's encoding: a key of small order


def _raw(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _openssl_accepts(public: bytes, signature: bytes, message: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def _flip(data: bytes, bit: int) -> bytes:
    changed = bytearray(data)
    changed[bit // 8] ^= 1 << (bit % 8)
    return bytes(changed)


def _cases() -> list[tuple[str, bytes, bytes, bytes, bool]]:
    """(name, public key, signature, message, honest): honest ones must verify."""
    cases: list[tuple[str, bytes, bytes, bytes, bool]] = []
    for n, length in enumerate((0, 1, 64, 2600, 70_000)):
        key = Ed25519PrivateKey.generate()
        public, message = _raw(key.public_key()), os.urandom(length)
        signature = key.sign(message)
        cases.append((f"honest {length} B", public, signature, message, True))
        if length:
            cases.append((f"message bit flipped {n}", public, signature, _flip(message, 3), False))
        cases += [
            (f"R bit flipped {n}", public, _flip(signature, 9), message, False),
            (f"S bit flipped {n}", public, _flip(signature, 300), message, False),
            (f"key bit flipped {n}", _flip(public, 17), signature, message, False),
            (f"another key {n}", _raw(Ed25519PrivateKey.generate().public_key()), signature, message, False),
            (f"signature cut {n}", public, signature[:63], message, False),
            (f"signature longer {n}", public, signature + b"\0", message, False),
            (f"empty signature {n}", public, b"", message, False),
            (f"key cut {n}", public[:31], signature, message, False),
        ]
        s = int.from_bytes(signature[32:], "little")
        if s + GROUP_ORDER < 2**256:
            wide = signature[:32] + (s + GROUP_ORDER).to_bytes(32, "little")
            cases.append((f"S not canonical {n}", public, wide, message, False))
    # the neutral point as key and as R, S = 0: the cofactorless equation holds for any message
    cases.append(("small-order key, R and S", IDENTITY, IDENTITY + bytes(32), b"any message", False))
    return cases


CASES = _cases()


@pytest.mark.parametrize(("name", "public", "signature", "message", "honest"), CASES, ids=[c[0] for c in CASES])
def test_the_check_accepts_honest_signatures_and_nothing_openssl_refuses(
    name: str, public: bytes, signature: bytes, message: bytes, honest: bool
) -> None:
    accepted = signature_holds(public, signature, message)
    assert accepted is honest
    if accepted:
        assert _openssl_accepts(public, signature, message)
    elif honest is False and len(public) == 32 and len(signature) == 64 and name.startswith(("message", "R ", "S ")):
        assert not _openssl_accepts(public, signature, message)  # a tampered signature: both refuse it


def test_a_small_order_key_is_refused_where_openssl_accepts_it() -> None:
    """The one place the two differ in this set: libsodium is the stricter (fail closed)."""
    signature = IDENTITY + bytes(32)
    assert _openssl_accepts(IDENTITY, signature, b"any message")
    assert not signature_holds(IDENTITY, signature, b"any message")
