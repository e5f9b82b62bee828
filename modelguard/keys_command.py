"""``modelguard keys create | rotate | list``: the signing keys of the services and the CI reporter, in a keys
folder (``--keys-dir``, default ``$MODELGUARD_KEYS_DIR`` or ``$MODELGUARD_HOME/keys``): ``<service>.key`` (the
private key, mode 0600, never printed) and ``registry.json`` (the public keys, for every service and for
``modelguard verify``). docs/deploy.md, "Signing keys", says how a rotation is rolled out."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from libs.signing.key_store import KeyFiles, KeyStoreError, create_keys, list_keys, rotate_key
from libs.signing.keys import KeyRegistryError, RegisteredKey, timestamp
from modelguard.exit_codes import FAILURE, OK, USAGE

SIGNERS = ("ledger", "detector", "context", "diagnoser", "repairer", "validator", "publisher", "reporter")
"""Who signs: the seven services (``modelguard.stack.SERVICES``) and the CI reporter (``CLIENTS``)."""


def add_keys_parser(sub: Any) -> None:
    """Register ``keys`` on the ``modelguard`` subparsers."""
    keys = sub.add_parser(
        "keys",
        help="the services' signing keys: create, rotate, list (no private material is ever printed)",
        description="The services' signing keys: create, rotate, list (no private material is ever printed). "
        "Exit 2 on a name that signs nothing, a key that exists (create) or does not (rotate), or no registry (list); "
        "1 when the keys folder cannot be written.",
    )
    keys.add_argument(
        "action",
        choices=["create", "rotate", "list"],
        help="create: a key pair per service; rotate: a new active key, the old public key kept as retired; "
        "list: service, key id, created, active or retired",
    )
    keys.add_argument("services", nargs="*", metavar="SERVICE", help=f"create, rotate: among {', '.join(SIGNERS)}")
    keys.add_argument("--all", action="store_true", help="with create: every service and the CI reporter")
    keys.add_argument(
        "--keys-dir", metavar="DIR", help="the keys folder (default: $MODELGUARD_KEYS_DIR, else $MODELGUARD_HOME/keys)"
    )
    keys.set_defaults(run=run_keys)


def run_keys(args: argparse.Namespace) -> int:
    try:
        files = KeyFiles.in_dir(_keys_dir(args.keys_dir))
        if args.action == "create":
            return _create(files, _signers(args, "create"))
        if args.action == "rotate":
            [service] = _signers(args, "rotate")
            return _rotate(files, service)
        if args.services or args.all:
            raise KeyStoreError("keys list takes no service names")
        return _list(files)
    except (KeyStoreError, KeyRegistryError) as exc:  # bad input: a name, a key that exists or not, a broken file
        print(f"modelguard keys: {' '.join(str(exc).split())}", file=sys.stderr)
        return USAGE
    except OSError as exc:  # the folder cannot be written or read: outside the input
        print(f"modelguard keys: {' '.join(str(exc).split())}", file=sys.stderr)
        return FAILURE


def _keys_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    from libs.settings import load_settings

    return load_settings().keys_dir


def _signers(args: argparse.Namespace, action: str) -> list[str]:
    if action == "create" and args.all:
        if args.services:
            raise KeyStoreError("keys create takes service names or --all, not both")
        return list(SIGNERS)
    if args.all:
        raise KeyStoreError(f"--all goes with keys create, not keys {action}")
    if not args.services:
        what = "the services to create keys for, or --all" if action == "create" else "one service"
        raise KeyStoreError(f"keys {action} needs {what}")
    for name in args.services:
        if name not in SIGNERS:
            raise KeyStoreError(f"{name} is not a service or client that signs: {', '.join(SIGNERS)}")
    if action == "rotate" and len(args.services) != 1:
        raise KeyStoreError("keys rotate takes one service at a time")
    return list(args.services)


def _create(files: KeyFiles, services: list[str]) -> int:
    for key in create_keys(files, services):
        print(f"created {key.owner} {key.keyid}: private key {files.private_key(key.owner)} (mode 0600)")
    print(f"public keys: {files.registry}", file=sys.stderr)
    return OK


def _rotate(files: KeyFiles, service: str) -> int:
    rotation = rotate_key(files, service)
    print(
        f"rotated {service}: {rotation.active.keyid} active, {rotation.retired.keyid} retired "
        f"(it still verifies what it signed); private key {files.private_key(service)}"
    )
    print(
        f"next: give every service {files.registry}, then {service} its new key (docs/deploy.md, 'Rotating a key')",
        file=sys.stderr,
    )
    return OK


def _list(files: KeyFiles) -> int:
    rows = [("SERVICE", "KEY", "CREATED", "STATE"), *(_row(k) for k in list_keys(files))]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[3]]))
    return OK


def _row(key: RegisteredKey) -> tuple[str, str, str, str]:
    created = timestamp(key.created) if key.created else "-"
    state = "active" if key.retired is None else f"retired {timestamp(key.retired)}"
    return key.owner, key.keyid, created, state
