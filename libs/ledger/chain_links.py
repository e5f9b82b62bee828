"""How an event is linked into its incident's chain, and how a stored link is checked.

An event's hash is sha256(prev_hash || envelope_digest), both taken as their 32 raw bytes, where envelope_digest is
sha256 of the envelope's bytes (the row's `envelope_digest`): one pass over the envelope gives both the digest and,
over 64 more bytes, the link. Rows appended before 2026-12-05 hold the first format, sha256(prev_hash || envelope),
which passed over the envelope a second time. Either commits to the envelope and to everything before it in the
incident: to forge one, an attacker needs a second envelope with the same sha256, and a link of one format cannot
equal a link of the other over different inputs without a sha256 collision either (a digest is 32 bytes, an
envelope far more). So `verify` accepts a first-format link in a chain until the incident's first link of the
current format, and never after it: a ledger upgraded in place keeps verifying, and a chain never goes back.
"""

from __future__ import annotations

import hashlib
from enum import Enum


class LinkFormat(Enum):
    OVER_ENVELOPE = 1
    """sha256(prev_hash || envelope): rows appended before 2026-12-05."""
    OVER_DIGEST = 2
    """sha256(prev_hash || sha256(envelope)): every row appended since."""


def link_hash(prev_hash: str, envelope_digest: bytes) -> str:
    """The link of an event whose envelope's sha256 is `envelope_digest` (raw bytes) onto `prev_hash` (hex)."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + envelope_digest).hexdigest()


def envelope_link_hash(prev_hash: str, envelope: bytes) -> str:
    """The first format's link: sha256(prev_hash || envelope)."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + envelope).hexdigest()


def chain_hash(prev_hash: str, envelope: bytes) -> str:
    """The link an append writes today for an event with this envelope."""
    return link_hash(prev_hash, hashlib.sha256(envelope).digest())


def link_format(prev_hash: str, envelope_digest: bytes, envelope: bytes, stored_hash: str) -> LinkFormat | None:
    """Which format `stored_hash` is the link of, over this envelope (its digest given, computed from the bytes);
    None when it is neither."""
    if link_hash(prev_hash, envelope_digest) == stored_hash:
        return LinkFormat.OVER_DIGEST
    if envelope_link_hash(prev_hash, envelope) == stored_hash:
        return LinkFormat.OVER_ENVELOPE
    return None
