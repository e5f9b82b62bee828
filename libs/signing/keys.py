"""Ed25519 signing keys of ModelGuard's services and the registry of their public halves.

The registry (``registry.json``) holds every public key a producer ever signed with: the active one, and those a
rotation retired (``libs/signing/key_store.py``), which still verify the events they signed but sign no new ones: a
service refuses to start with a retired key (:meth:`KeyRegistry.signing_key_problem`). A registry loaded from a
file re-reads it when asked for a key it does not hold and the file has changed, so a running service learns a key
minted after it started (a ConfigMap or a volume updated in place) without a restart.
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from libs.canonical_json import sha256_hex
from libs.signing.ed25519_check import signature_holds

RELOAD_INTERVAL_S = 1.0
"""At most one look at the registry file's change time per second, however many unknown key ids arrive."""


def key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + sha256_hex(raw)[:16]


def timestamp(moment: datetime) -> str:
    """The registry's form of a time: UTC, whole seconds, ``Z``."""
    return moment.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class SigningKey:
    owner: str
    private_key: Ed25519PrivateKey

    @property
    def keyid(self) -> str:
        return key_id(self.private_key.public_key())

    def sign(self, message: bytes) -> bytes:
        return self.private_key.sign(message)


@dataclass(frozen=True)
class RegisteredKey:
    keyid: str
    owner: str
    public_key: Ed25519PublicKey
    created: datetime | None = None
    """When the key was minted (None: a registry written before keys had dates)."""
    retired: datetime | None = None
    """When a rotation replaced it; a retired key verifies what it signed before and signs nothing new."""

    @property
    def active(self) -> bool:
        return self.retired is None

    @cached_property
    def public_bytes(self) -> bytes:
        """The key's 32 raw bytes."""
        return self.public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    def verifies(self, signature: bytes, message: bytes) -> bool:
        """Whether `signature` is this key's signature of `message` (`libs/signing/ed25519_check.py`)."""
        return signature_holds(self.public_bytes, signature, message)

    def entry(self) -> dict[str, str]:
        entry = {"keyid": self.keyid, "owner": self.owner, "public_key": base64.b64encode(self.public_bytes).decode()}
        if self.created is not None:
            entry["created"] = timestamp(self.created)
        if self.retired is not None:
            entry["retired"] = timestamp(self.retired)
        return entry


class KeyRegistryError(ValueError):
    pass


class KeyRegistry:
    """Public keys by key id, each bound to the one producer allowed to sign with it."""

    def __init__(self, keys: Iterable[RegisteredKey], source: Path | None = None) -> None:
        self._keys = {k.keyid: k for k in keys}
        self._source = source
        self._seen = _file_state(source) if source is not None else None
        self._checked_at = time.monotonic()
        self._lock = threading.Lock()

    def get(self, keyid: str) -> RegisteredKey | None:
        found = self._keys.get(keyid)
        if found is None and self._reloaded():
            found = self._keys.get(keyid)
        return found

    def entries(self) -> list[RegisteredKey]:
        """Every key, by owner, the active one first, then the retired ones newest first."""
        return sorted(self._keys.values(), key=_listing_order)

    def active_key(self, owner: str) -> RegisteredKey | None:
        return next((k for k in self.entries() if k.owner == owner and k.active), None)

    def signing_key_problem(self, key: SigningKey) -> str | None:
        """Why ``key`` may not sign new events (one line), or None when it is its owner's active key."""
        registered = self.get(key.keyid)
        active = self.active_key(key.owner)
        if registered is None or registered.owner != key.owner:
            named = f"{key.owner}'s active key is {active.keyid}" if active else f"it holds no key of {key.owner}"
            return f"its signing key {key.keyid} is not in the key registry ({named})"
        if registered.retired is not None:
            instead = f"; mount the active key {active.keyid}" if active else ""
            return (
                f"its signing key {key.keyid} was retired at {timestamp(registered.retired)} (rotated out): it "
                f"verifies older events but signs no new ones{instead}"
            )
        return None

    def __len__(self) -> int:
        return len(self._keys)

    def to_document(self) -> dict[str, object]:
        return {"keys": [k.entry() for k in sorted(self._keys.values(), key=lambda k: k.keyid)]}

    @classmethod
    def from_document(cls, document: dict[str, object], source: Path | None = None) -> KeyRegistry:
        return cls(_entries(document), source)

    @classmethod
    def load(cls, path: Path) -> KeyRegistry:
        return cls(_read(path), path)

    def _reloaded(self) -> bool:
        """Re-read the source file if it changed since it was read; True when it was."""
        if self._source is None or time.monotonic() - self._checked_at < RELOAD_INTERVAL_S:
            return False
        with self._lock:
            self._checked_at = time.monotonic()
            state = _file_state(self._source)
            if state is None or state == self._seen:
                return False
            try:
                keys = _read(self._source)
            except KeyRegistryError:
                return False  # a file caught half-written, or broken: keep what was read; the next miss looks again
            self._keys, self._seen = {k.keyid: k for k in keys}, state
            return True


def _file_state(path: Path) -> tuple[int, int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_ino, status.st_mtime_ns, status.st_size


def _listing_order(key: RegisteredKey) -> tuple[str, bool, float]:
    retired = key.retired.timestamp() if key.retired is not None else 0.0
    return key.owner, not key.active, -retired


def _read(path: Path) -> list[RegisteredKey]:
    try:
        return _entries(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise KeyRegistryError(f"cannot read key registry {path}: {exc}") from exc


def _entries(document: object) -> list[RegisteredKey]:
    entries = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise KeyRegistryError("key registry has no 'keys' list")
    keys: list[RegisteredKey] = []
    for entry in entries:
        public = Ed25519PublicKey.from_public_bytes(base64.b64decode(entry["public_key"]))
        if key_id(public) != entry["keyid"]:
            raise KeyRegistryError(f"key id {entry['keyid']} does not match its public key")
        created, retired = _moment(entry, "created"), _moment(entry, "retired")
        keys.append(RegisteredKey(entry["keyid"], entry["owner"], public, created, retired))
    return keys


def _moment(entry: dict[str, object], name: str) -> datetime | None:
    raw = entry.get(name)
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise KeyRegistryError(f"key {entry['keyid']}: {name} must be a time like 2025-01-31T12:00:00Z")
    moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        raise KeyRegistryError(f"key {entry['keyid']}: {name} {raw!r} has no time zone")
    return moment.astimezone(UTC)


def generate_key(owner: str) -> SigningKey:
    return SigningKey(owner, Ed25519PrivateKey.generate())


def save_private_key(key: SigningKey, path: Path) -> None:
    """Write the key (PKCS#8 PEM) readable by its owner only: to a new file in the same folder, renamed over
    ``path``, so a reader never sees half a key and a failed write leaves the old one."""
    pem = key.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(pem)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def load_private_key(owner: str, path: Path) -> SigningKey:
    loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise KeyRegistryError(f"{path} is not an Ed25519 private key")
    return SigningKey(owner, loaded)


def provision_keys(owners: list[str], key_dir: Path) -> KeyRegistry:
    """Create a key per owner where none exists yet and write the public registry beside them, keeping every key
    the registry already holds (a rotation's retired ones too). See ``libs.signing.key_store.provision``."""
    from libs.signing.key_store import KeyFiles, provision

    return provision(KeyFiles.in_dir(key_dir), owners)
