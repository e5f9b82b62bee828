"""Rotation in the key library: the registry keeps every public key a service ever signed with (the retired ones
verify old envelopes, never new ones from a starting service), `provision_keys` (stack up, investigate, compose
init) keeps what a rotation wrote, and a running service learns a new key from the registry file without a
restart (a Kubernetes ConfigMap or compose volume updated in place)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from contracts.envelope import EVENT_PAYLOAD_TYPE
from libs.signing.dsse import SignatureError, sign_envelope, verify_envelope
from libs.signing.key_store import KeyFiles, KeyStoreError, create_keys, rotate_key
from libs.signing.keys import KeyRegistry, load_private_key, provision_keys

REPO_ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
T1 = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def test_an_envelope_signed_before_a_rotation_still_verifies_and_names_its_owner(tmp_path: Path) -> None:
    files = KeyFiles.in_dir(tmp_path)
    create_keys(files, ["validator"], now=T0)
    old = load_private_key("validator", files.private_key("validator"))
    before = sign_envelope(b"{}", EVENT_PAYLOAD_TYPE, old)

    rotation = rotate_key(files, "validator", now=T1)
    new = load_private_key("validator", files.private_key("validator"))
    after = sign_envelope(b"{}", EVENT_PAYLOAD_TYPE, new)
    registry = KeyRegistry.load(files.registry)

    assert (rotation.retired.keyid, rotation.active.keyid) == (old.keyid, new.keyid)
    assert verify_envelope(before, registry, expected_owner="validator") == "validator"
    assert verify_envelope(after, registry, expected_owner="validator") == "validator"
    assert registry.signing_key_problem(new) is None
    assert registry.signing_key_problem(old) == (
        f"its signing key {old.keyid} was retired at 2025-06-01T12:00:00Z (rotated out): it verifies older "
        f"events but signs no new ones; mount the active key {new.keyid}"
    )
    with pytest.raises(SignatureError, match="belongs to validator, not publisher"):
        verify_envelope(before, registry, expected_owner="publisher")


def test_a_key_the_registry_does_not_hold_is_refused_for_signing(tmp_path: Path) -> None:
    files = KeyFiles.in_dir(tmp_path)
    create_keys(files, ["ledger"], now=T0)
    stranger = provision_keys(["ledger"], tmp_path / "elsewhere")
    key = load_private_key("ledger", tmp_path / "elsewhere" / "ledger.key")
    problem = KeyRegistry.load(files.registry).signing_key_problem(key)
    assert problem == f"its signing key {key.keyid} is not in the key registry (ledger's active key is " + (
        f"{KeyRegistry.load(files.registry).active_key('ledger').keyid})"  # type: ignore[union-attr]
    )
    assert len(stranger) == 1


def test_provision_keys_keeps_a_rotation_and_refuses_a_retired_key_file(tmp_path: Path) -> None:
    files = KeyFiles.in_dir(tmp_path)
    create_keys(files, ["ledger", "detector"], now=T0)
    retired_copy = tmp_path / "old-detector.key"
    shutil.copy(files.private_key("detector"), retired_copy)
    rotate_key(files, "detector", now=T1)
    rotated = files.registry.read_text()

    registry = provision_keys(["ledger", "detector", "publisher"], tmp_path)

    assert sorted((k.owner, k.active) for k in registry.entries()) == [
        ("detector", False),
        ("detector", True),
        ("ledger", True),
        ("publisher", True),
    ]
    assert files.registry.read_text() != rotated and len(KeyRegistry.load(files.registry)) == 4
    shutil.copy(retired_copy, files.private_key("detector"))
    with pytest.raises(KeyStoreError, match=r"detector\.key holds detector's key ed25519:\w+, retired at"):
        provision_keys(["detector"], tmp_path)


def test_a_running_service_learns_a_new_key_from_the_registry_file_without_a_restart(tmp_path: Path) -> None:
    files = KeyFiles.in_dir(tmp_path)
    create_keys(files, ["repairer"], now=T0)
    registry = KeyRegistry.load(files.registry)
    unchanged = os.stat(files.registry).st_mtime_ns
    assert registry.get("ed25519:0000000000000000") is None
    assert os.stat(files.registry).st_mtime_ns == unchanged

    rotation = rotate_key(files, "repairer", now=T1)
    deadline = time.monotonic() + 5
    while registry.get(rotation.active.keyid) is None and time.monotonic() < deadline:
        time.sleep(0.05)

    found = registry.get(rotation.active.keyid)
    assert found is not None and found.owner == "repairer" and found.active
    retired = registry.get(rotation.retired.keyid)
    assert retired is not None and not retired.active


def test_a_service_started_with_a_retired_key_exits_2_with_one_line(tmp_path: Path) -> None:
    files = KeyFiles.in_dir(tmp_path / "keys")
    create_keys(files, ["repairer"], now=T0)
    old = tmp_path / "signing" / "repairer.key"
    old.parent.mkdir()
    shutil.copy(files.private_key("repairer"), old)
    rotation = rotate_key(files, "repairer", now=T1)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MODELGUARD_")}
    env = {
        **clean,
        "MODELGUARD_HOME": str(tmp_path / "home"),
        "MODELGUARD_KEYS_DIR": str(tmp_path / "keys"),
        "MODELGUARD_SIGNING_KEY_FILE": str(old),
        "MODELGUARD_KAFKA_BOOTSTRAP": "127.0.0.1:1",
    }

    done = subprocess.run(
        [sys.executable, "-m", "services.repairer.main"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        f"repairer: its signing key {rotation.retired.keyid} was retired at 2025-06-01T12:00:00Z (rotated out): it "
        f"verifies older events but signs no new ones; mount the active key {rotation.active.keyid}"
    ]


def test_the_detector_refuses_a_retired_ci_reporter_key_with_one_line(tmp_path: Path) -> None:
    files = KeyFiles.in_dir(tmp_path / "keys")
    create_keys(files, ["detector", "reporter"], now=T0)
    old = tmp_path / "reporter" / "reporter.key"
    old.parent.mkdir()
    shutil.copy(files.private_key("reporter"), old)
    rotation = rotate_key(files, "reporter", now=T1)
    (tmp_path / "home" / "policies").mkdir(parents=True)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MODELGUARD_")}
    env = {
        **clean,
        "MODELGUARD_HOME": str(tmp_path / "home"),
        "MODELGUARD_KEYS_DIR": str(tmp_path / "keys"),
        "MODELGUARD_KAFKA_BOOTSTRAP": "127.0.0.1:1",
        "MODELGUARD_INGEST_PORT": "18088",
        "MODELGUARD_INGEST_TOKEN": "a-token-of-enough-characters",
        "MODELGUARD_REPORTER_KEY_FILE": str(old),
    }

    done = subprocess.run(
        [sys.executable, "-m", "services.detector.main"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 2, done.stderr[-2000:]
    [line] = [x for x in done.stderr.splitlines() if not x.startswith("{")]
    assert line.startswith(
        f"detector: the CI reporter's key (MODELGUARD_REPORTER_KEY_FILE): its signing key {rotation.retired.keyid} "
        "was retired at 2025-06-01T12:00:00Z"
    )
