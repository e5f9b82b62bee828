"""docker-compose's one-shot `init`: the signing keys, the bundled policies and the topics. Run once before the
services; running it again changes nothing.

Keys: one volume per service (``key-<service>``, mounted here at ``/var/lib/modelguard-keys/<service>``) holds that
service's private key, and ``key-registry`` the public registry; each service mounts only its own key volume (the
detector also the CI reporter's), so no container but this one sees another's key. Keys an older compose file kept
on the shared home volume (``$MODELGUARD_HOME/keys``) are moved into the per-service volumes and their registry
kept, so the ledger's events keep verifying, then deleted from the shared volume.

``python /srv/deploy/init.py rotate SERVICE`` rotates a service's key (docs/deploy.md, "Signing keys"):
``docker compose run --rm init python /srv/deploy/init.py rotate diagnoser``, then recreate that service.

Kubernetes takes keys from Secrets and topics from Strimzi or the topics Job instead (see docs/deploy.md).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

from contracts.registry import all_topics
from libs.bus.topic_config import default_topic_configs
from libs.bus.topics import ensure_topics
from libs.settings import load_settings
from libs.signing.key_store import KeyFiles, KeyStoreError, provision, rotate_key
from libs.signing.keys import load_private_key, save_private_key
from modelguard.stack import CLIENTS, SERVICES, install_default_inputs

KEY_VOLUMES = Path(os.environ.get("MODELGUARD_COMPOSE_KEY_VOLUMES") or "/var/lib/modelguard-keys")


def compose_key_files(root: Path | None = None) -> KeyFiles:
    """``root/registry/registry.json`` and ``root/<owner>/<owner>.key``: each folder is a volume of its own."""
    root = root or KEY_VOLUMES
    return KeyFiles(root / "registry" / "registry.json", root, per_owner_folders=True)


def adopt_shared_keys(shared: Path, files: KeyFiles, owners: list[str]) -> list[str]:
    """Move the keys an older compose file kept in ``shared`` (the home volume every container mounted) into the
    per-service volumes, keeping its registry; then delete the private keys there. Returns the owners moved."""
    if not shared.is_dir():
        return []
    if (shared / "registry.json").is_file() and not files.registry.exists():
        files.registry.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shared / "registry.json", files.registry)
    moved = []
    for owner in owners:
        old = shared / f"{owner}.key"
        if old.is_file() and not files.private_key(owner).exists():
            save_private_key(load_private_key(owner, old), files.private_key(owner))
            moved.append(owner)
    for old in shared.glob("*.key"):
        old.unlink()
    return moved


def main(argv: list[str]) -> int:
    settings = load_settings()
    files = compose_key_files()
    owners = [*SERVICES, *CLIENTS]
    try:
        if argv[:1] == ["rotate"] and len(argv) == 2 and argv[1] in owners:
            rotation = rotate_key(files, argv[1])
            print(f"init: rotated {argv[1]}: {rotation.active.keyid} active, {rotation.retired.keyid} retired")
            return 0
        if argv:
            print(f"init: usage: init.py [rotate {{{','.join(owners)}}}]", file=sys.stderr)
            return 2
        moved = adopt_shared_keys(settings.home / "keys", files, owners)
        registry = provision(files, owners)
    except KeyStoreError as exc:
        print(f"init: {exc}", file=sys.stderr)
        return 2
    install_default_inputs(settings)
    replication = int(os.environ.get("MODELGUARD_KAFKA_REPLICATION") or 1)
    configs = default_topic_configs(all_topics())  # a week of events, the dead letters bounded (libs/bus/topic_config)
    created = asyncio.run(ensure_topics(settings.kafka, all_topics(), settings.kafka_partitions, replication, configs))
    note = f" ({len(moved)} moved off the shared volume)" if moved else ""
    active = sum(1 for k in registry.entries() if k.active)
    print(f"init: {active} signing keys{note}; policies in {settings.policy_dir}; {len(created)} topics created")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
