"""One Ed25519 signature check, by libsodium (PyNaCl).

libsodium checks a signature in about half the time OpenSSL (`cryptography`) takes on the same machine (45 against
87 µs for a 2.6 kB message here), and the check is most of what verifying the ledger costs. It is also the stricter
of the two: besides everything OpenSSL refuses (a wrong signature, a non-canonical S), it refuses a public key or
an R of small order and a non-canonical key encoding, which an honest signer never produces. So whatever it accepts,
OpenSSL accepts too (`tests/unit/signing/test_ed25519_check.py` holds the two side by side). Keys are still made,
stored and used for signing through `cryptography`; only their 32 raw public bytes come here.
"""

from __future__ import annotations

from nacl.bindings import crypto_sign_BYTES, crypto_sign_open
from nacl.exceptions import BadSignatureError
from nacl.exceptions import ValueError as NaclValueError

PUBLIC_KEY_BYTES = 32


def signature_holds(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """True when `signature` is `public_key`'s Ed25519 signature of `message`; False for anything else, including
    a signature or key of the wrong length."""
    if len(signature) != crypto_sign_BYTES or len(public_key) != PUBLIC_KEY_BYTES:
        return False
    try:
        crypto_sign_open(signature + message, public_key)
    except (BadSignatureError, NaclValueError, ValueError):
        return False
    return True
