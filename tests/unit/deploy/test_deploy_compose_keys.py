"""docker-compose.yml's signing keys: each ModelGuard container mounts only its own private key (the detector also
the CI reporter's, which it signs CI reports with) and the public registry, read-only, at the paths its settings
name; `init` alone mounts every key volume; the runner and the console mount no private key, and the shared home
volume holds none. deploy/compose/init.py mints the keys into those volumes and moves keys an older compose file
left on the shared volume there, keeping the registry (the ledger's events keep verifying)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from libs.signing.key_store import KeyFiles, create_keys
from libs.signing.keys import KeyRegistry, load_private_key
from modelguard.stack import CLIENTS, REPO_ROOT, SERVICES

COMPOSE = REPO_ROOT / "docker-compose.yml"
KEY_VOLUME = re.compile(r"^key-(?P<owner>[a-z]+)$")


def _compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


def _mounts(service: dict[str, Any]) -> list[tuple[str, str, bool]]:
    """(volume, path in the container, read-only) of each named-volume mount."""
    found = []
    for volume in service.get("volumes", []):
        source, target, *mode = volume.split(":")
        if not source.startswith((".", "/")):
            found.append((source, target, mode == ["ro"]))
    return found


def _key_mounts(service: dict[str, Any]) -> dict[str, tuple[str, bool]]:
    return {source: (target, ro) for source, target, ro in _mounts(service) if KEY_VOLUME.match(source)}


def test_each_service_mounts_only_its_own_private_key_and_the_registry_read_only() -> None:
    document = _compose()
    services = document["services"]
    for name in SERVICES:
        service, env = services[name], services[name]["environment"]
        mounts = _key_mounts(service)
        own = {f"key-{name}", "key-registry"} | ({"key-reporter"} if name == "detector" else set())
        assert set(mounts) == own, name
        assert all(ro for _, ro in mounts.values()), f"{name}: every key mount is read-only"
        signing = Path(env["MODELGUARD_SIGNING_KEY_FILE"])
        assert (signing.name, str(signing.parent)) == (f"{name}.key", mounts[f"key-{name}"][0]), name
        assert env["MODELGUARD_KEYS_DIR"] == mounts["key-registry"][0], name
        if name == "detector":
            reporter = Path(env["MODELGUARD_REPORTER_KEY_FILE"])
            assert (reporter.name, str(reporter.parent)) == ("reporter.key", mounts["key-reporter"][0])
        home = env["MODELGUARD_HOME"]
        assert not Path(env["MODELGUARD_KEYS_DIR"]).is_relative_to(home), "no key on the shared home volume"


def test_only_init_mounts_every_key_volume_and_nothing_else_mounts_a_private_key() -> None:
    document = _compose()
    services, volumes = document["services"], document["volumes"]
    owners = {*SERVICES, *CLIENTS}
    declared = {v for v in volumes if KEY_VOLUME.match(v)}
    assert declared == {f"key-{o}" for o in owners} | {"key-registry"}
    init = _key_mounts(services["init"])
    assert set(init) == declared and not any(ro for _, ro in init.values()), "init writes every key volume"
    for name, service in services.items():
        private = {v for v in _key_mounts(service) if v != "key-registry"}
        if name == "init":
            continue
        expected = (
            set() if name not in SERVICES else {f"key-{name}"} | ({"key-reporter"} if name == "detector" else set())
        )
        assert private == expected, name
    assert _key_mounts(services["console"]) == {"key-registry": ("/etc/modelguard/keys", True)}
    assert "volumes" not in services["runner"]


def test_the_image_creates_the_folders_init_mounts_the_key_volumes_on_owned_by_the_service_user() -> None:
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    init = _key_mounts(_compose()["services"]["init"])
    loop = re.search(r"for owner in ([a-z ]+); do", dockerfile)
    assert loop is not None and "install -d -o 10001 -g 10001" in dockerfile
    created = {f"/var/lib/modelguard-keys/{o}" for o in loop.group(1).split()} | {"/var/lib/modelguard-keys/registry"}
    assert {target for target, _ in init.values()} == created
    assert "/var/lib/modelguard-keys/registry" in dockerfile


def _init_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("compose_init", REPO_ROOT / "deploy" / "compose" / "init.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_init_moves_keys_off_the_shared_volume_and_keeps_the_registry(tmp_path: Path) -> None:
    init = _init_module()
    shared = tmp_path / "home" / "keys"
    create_keys(KeyFiles.in_dir(shared), [*SERVICES, *CLIENTS])
    before = {o: load_private_key(o, shared / f"{o}.key").keyid for o in (*SERVICES, *CLIENTS)}
    files = init.compose_key_files(tmp_path / "volumes")

    moved = init.adopt_shared_keys(shared, files, [*SERVICES, *CLIENTS])
    registry = init.provision(files, [*SERVICES, *CLIENTS])

    assert sorted(moved) == sorted(before) and not list(shared.glob("*.key")), "no private key left on the home"
    for owner, keyid in before.items():
        path = tmp_path / "volumes" / owner / f"{owner}.key"
        assert load_private_key(owner, path).keyid == keyid and path.stat().st_mode & 0o077 == 0
        assert [p.name for p in path.parent.iterdir()] == [f"{owner}.key"], "one key per volume"
    assert {k.keyid for k in registry.entries()} == set(before.values())
    assert KeyRegistry.load(tmp_path / "volumes" / "registry" / "registry.json").to_document() == (
        registry.to_document()
    )
    assert init.adopt_shared_keys(shared, files, [*SERVICES, *CLIENTS]) == [], "a second run moves nothing"


def test_init_rotates_one_services_key_in_its_volume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    init = _init_module()
    monkeypatch.setattr(init, "KEY_VOLUMES", tmp_path / "volumes")
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    files = init.compose_key_files()
    init.provision(files, [*SERVICES, *CLIENTS])
    old = load_private_key("diagnoser", files.private_key("diagnoser")).keyid
    others = {p: p.read_bytes() for p in (tmp_path / "volumes").glob("*/*.key") if p.parent.name != "diagnoser"}

    assert init.main(["rotate", "diagnoser"]) == 0
    out = capsys.readouterr().out
    assert init.main(["rotate", "mallory"]) == 2

    new = load_private_key("diagnoser", files.private_key("diagnoser")).keyid
    assert out.strip() == f"init: rotated diagnoser: {new} active, {old} retired"
    retired = KeyRegistry.load(files.registry).get(old)
    assert retired is not None and not retired.active
    assert {p: p.read_bytes() for p in others} == others
    assert capsys.readouterr().err.startswith("init: usage: init.py [rotate {ledger,")
