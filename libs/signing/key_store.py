"""A folder of signing keys: create a producer's key pair, rotate it, list what the registry holds.

The private key of each producer is a PEM file only its owner reads (0600), written whole or not at all; the public
registry (``registry.json``) lists every key ever minted, each with when it was created and, once a rotation
replaced it, when it was retired. Rotation keeps the retired public key (events it signed keep verifying) and
replaces the private key file (nothing is left to sign with the old one). Nothing here prints or returns private
material: what comes back is key ids and times.

:class:`KeyFiles` says where the files are: one folder for everything (``modelguard keys``, the embedded stack), or
the registry apart from one folder per producer (docker-compose: each container mounts only its own key).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from libs.signing.keys import (
    KeyRegistry,
    KeyRegistryError,
    RegisteredKey,
    SigningKey,
    generate_key,
    load_private_key,
    save_private_key,
    timestamp,
)


class KeyStoreError(ValueError):
    """A key operation that cannot be done; the message is one line."""


@dataclass(frozen=True)
class KeyFiles:
    registry: Path
    private_root: Path
    per_owner_folders: bool = False
    """True: ``private_root/<owner>/<owner>.key`` (a volume per producer); False: ``private_root/<owner>.key``."""

    @classmethod
    def in_dir(cls, keys_dir: Path) -> KeyFiles:
        return cls(keys_dir / "registry.json", keys_dir)

    def private_key(self, owner: str) -> Path:
        folder = self.private_root / owner if self.per_owner_folders else self.private_root
        return folder / f"{owner}.key"

    @property
    def where(self) -> str:
        return str(self.private_root)


@dataclass(frozen=True)
class Rotation:
    retired: RegisteredKey
    active: RegisteredKey


def read_registry(files: KeyFiles) -> KeyRegistry:
    """The registry, or an empty one when there is no file yet; a file that cannot be read is an error."""
    if not files.registry.exists():
        return KeyRegistry([])
    try:
        return KeyRegistry.load(files.registry)
    except KeyRegistryError as exc:
        raise KeyStoreError(str(exc)) from None


def write_registry(files: KeyFiles, keys: Iterable[RegisteredKey]) -> KeyRegistry:
    """Write the public registry whole (a new file renamed over the old), readable by everyone: it is public."""
    registry = KeyRegistry(keys)
    files.registry.parent.mkdir(parents=True, exist_ok=True)
    partial = files.registry.with_name(f".{files.registry.name}.{os.getpid()}.partial")
    try:
        partial.write_text(json.dumps(registry.to_document(), indent=2) + "\n")
        partial.chmod(0o644)
        os.replace(partial, files.registry)
    finally:
        partial.unlink(missing_ok=True)
    return registry


def _registered(key: SigningKey, now: datetime) -> RegisteredKey:
    return RegisteredKey(key.keyid, key.owner, key.private_key.public_key(), created=now)


def _now(now: datetime | None) -> datetime:
    return (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)


def create_keys(files: KeyFiles, owners: Sequence[str], *, now: datetime | None = None) -> list[RegisteredKey]:
    """Mint a key pair for each owner. Refused, before anything is written, for an owner that already has an active
    key or a private key file: replacing a key is a rotation."""
    moment, registry = _now(now), read_registry(files)
    for owner in owners:
        if registry.active_key(owner) is not None or files.private_key(owner).exists():
            raise KeyStoreError(
                f"{owner} already has a key in {files.where} (to replace it: modelguard keys rotate {owner})"
            )
    created = []
    for owner in dict.fromkeys(owners):
        key = generate_key(owner)
        save_private_key(key, files.private_key(owner))
        created.append(_registered(key, moment))
    write_registry(files, [*registry.entries(), *created])
    return created


def rotate_key(files: KeyFiles, owner: str, *, now: datetime | None = None) -> Rotation:
    """A new active key for ``owner``; its current key stays in the registry, retired now."""
    moment, registry = _now(now), read_registry(files)
    current = registry.active_key(owner)
    if current is None:
        raise KeyStoreError(f"{owner} has no active key in {files.where} (create one: modelguard keys create {owner})")
    key = generate_key(owner)
    retired, active = replace(current, retired=moment), _registered(key, moment)
    others = [k for k in registry.entries() if k.keyid != current.keyid]
    # the registry first: a crash between the two writes leaves the old key file with a registry that retired it,
    # which a starting service refuses in one line, never a private key whose public half nobody knows
    write_registry(files, [*others, retired, active])
    save_private_key(key, files.private_key(owner))
    return Rotation(retired, active)


def list_keys(files: KeyFiles) -> list[RegisteredKey]:
    if not files.registry.exists():
        raise KeyStoreError(f"no key registry at {files.registry} (create keys: modelguard keys create --all)")
    return read_registry(files).entries()


def provision(files: KeyFiles, owners: Sequence[str], *, now: datetime | None = None) -> KeyRegistry:
    """What the embedded stack, ``investigate`` and compose's init need: every owner with a key, minted where
    missing, and the registry holding them beside every key it already held.

    An owner's key file whose key the registry does not know is registered (and the owner's previous active key
    retired: the file was replaced by hand); a missing key file is minted anew the same way. A key file holding a
    retired key is refused: it would sign with a key rotated out."""
    moment, registry = _now(now), read_registry(files)
    kept = {k.keyid: k for k in registry.entries()}
    for owner in dict.fromkeys(owners):
        path = files.private_key(owner)
        key = load_private_key(owner, path) if path.exists() else generate_key(owner)
        known = kept.get(key.keyid)
        if known is not None and known.retired is not None:
            raise KeyStoreError(
                f"{path} holds {owner}'s key {key.keyid}, retired at {timestamp(known.retired)}: restore the "
                f"active key or rotate again (modelguard keys rotate {owner})"
            )
        if known is not None and known.owner != owner:
            raise KeyStoreError(f"{path} holds {known.owner}'s key {key.keyid}, not a key of {owner}")
        if known is not None:
            continue
        if not path.exists():
            save_private_key(key, path)
        for keyid, other in list(kept.items()):
            if other.owner == owner and other.active:
                kept[keyid] = replace(other, retired=moment)
        kept[key.keyid] = _registered(key, moment)
    return write_registry(files, kept.values())
