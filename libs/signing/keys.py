"""Ed25519 signing keys of ModelGuard's services and the registry of their public halves."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from libs.canonical_json import sha256_hex


def key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + sha256_hex(raw)[:16]


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


class KeyRegistryError(ValueError):
    pass


class KeyRegistry:
    """Public keys by key id, each bound to the one producer allowed to sign with it."""

    def __init__(self, keys: list[RegisteredKey]) -> None:
        self._keys = {k.keyid: k for k in keys}

    def get(self, keyid: str) -> RegisteredKey | None:
        return self._keys.get(keyid)

    def __len__(self) -> int:
        return len(self._keys)

    def to_document(self) -> dict[str, object]:
        return {
            "keys": [
                {
                    "keyid": k.keyid,
                    "owner": k.owner,
                    "public_key": base64.b64encode(
                        k.public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
                    ).decode(),
                }
                for k in sorted(self._keys.values(), key=lambda k: k.keyid)
            ]
        }

    @classmethod
    def from_document(cls, document: dict[str, object]) -> KeyRegistry:
        keys: list[RegisteredKey] = []
        entries = document.get("keys")
        if not isinstance(entries, list):
            raise KeyRegistryError("key registry has no 'keys' list")
        for entry in entries:
            public = Ed25519PublicKey.from_public_bytes(base64.b64decode(entry["public_key"]))
            if key_id(public) != entry["keyid"]:
                raise KeyRegistryError(f"key id {entry['keyid']} does not match its public key")
            keys.append(RegisteredKey(entry["keyid"], entry["owner"], public))
        return cls(keys)

    @classmethod
    def load(cls, path: Path) -> KeyRegistry:
        try:
            return cls.from_document(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise KeyRegistryError(f"cannot read key registry {path}: {exc}") from exc


def generate_key(owner: str) -> SigningKey:
    return SigningKey(owner, Ed25519PrivateKey.generate())


def save_private_key(key: SigningKey, path: Path) -> None:
    pem = key.private_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(pem)


def load_private_key(owner: str, path: Path) -> SigningKey:
    loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(loaded, Ed25519PrivateKey):
        raise KeyRegistryError(f"{path} is not an Ed25519 private key")
    return SigningKey(owner, loaded)


def provision_keys(owners: list[str], key_dir: Path) -> KeyRegistry:
    """Create a key per owner where none exists yet and write the public registry beside them."""
    registered: list[RegisteredKey] = []
    for owner in owners:
        path = key_dir / f"{owner}.key"
        key = load_private_key(owner, path) if path.exists() else generate_key(owner)
        if not path.exists():
            save_private_key(key, path)
        registered.append(RegisteredKey(key.keyid, owner, key.private_key.public_key()))
    registry = KeyRegistry(registered)
    (key_dir / "registry.json").write_text(json.dumps(registry.to_document(), indent=2) + "\n")
    return registry
