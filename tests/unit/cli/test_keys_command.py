"""`modelguard keys create | rotate | list`: a service's Ed25519 key pair in a keys folder (the private key 0600 and
never printed), a rotation that keeps the old public key in the registry as retired (it verifies old events, it
signs no new ones), and a listing without private material. Bad input is one line and exit 2."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from libs.signing.keys import KeyRegistry, load_private_key
from modelguard.cli import main
from modelguard.stack import CLIENTS, SERVICES


@pytest.fixture
def keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("MODELGUARD_KEYS_DIR", raising=False)
    return tmp_path / "keys"


def _private_forms(path: Path) -> list[str]:
    """Every printable form of the private key in ``path``: the PEM body and the raw bytes in base64 and hex."""
    key = load_private_key("any", path).private_key
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    pem_body = "".join(path.read_text().splitlines()[1:-1])
    return [pem_body, base64.b64encode(raw).decode(), raw.hex(), "PRIVATE KEY"]


def _out(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


def test_create_writes_a_private_key_only_its_owner_reads_and_prints_only_the_key_id(
    keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "diagnoser", "--keys-dir", str(keys)]) == 0
    out = _out(capsys)

    private = keys / "diagnoser.key"
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    key = load_private_key("diagnoser", private)
    registry = KeyRegistry.load(keys / "registry.json")
    [entry] = registry.entries()
    assert (entry.owner, entry.keyid, entry.active) == ("diagnoser", key.keyid, True)
    assert entry.created is not None and entry.retired is None
    assert key.keyid in out
    assert not any(form in out for form in _private_forms(private))
    assert "PRIVATE" not in (keys / "registry.json").read_text()


def test_create_all_mints_every_service_and_the_ci_reporter(keys: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "create", "--all", "--keys-dir", str(keys)]) == 0
    assert {p.stem for p in keys.glob("*.key")} == {*SERVICES, *CLIENTS}
    assert {k.owner for k in KeyRegistry.load(keys / "registry.json").entries()} == {*SERVICES, *CLIENTS}
    created = [line.split()[1] for line in capsys.readouterr().out.splitlines() if line.startswith("created ")]
    assert sorted(created) == sorted({*SERVICES, *CLIENTS})


def test_create_refuses_a_service_that_has_a_key_and_leaves_it_alone(
    keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "ledger", "--keys-dir", str(keys)]) == 0
    before = (keys / "ledger.key").read_bytes(), (keys / "registry.json").read_bytes()
    capsys.readouterr()

    assert main(["keys", "create", "ledger", "publisher", "--keys-dir", str(keys)]) == 2

    [line] = capsys.readouterr().err.splitlines()
    assert line == (
        f"modelguard keys: ledger already has a key in {keys} (to replace it: modelguard keys rotate ledger)"
    )
    assert ((keys / "ledger.key").read_bytes(), (keys / "registry.json").read_bytes()) == before
    assert not (keys / "publisher.key").exists(), "nothing is created when one of the names is refused"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["keys", "create", "mallory"], "mallory is not a service or client that signs"),
        (["keys", "create"], "keys create needs the services to create keys for, or --all"),
        (["keys", "rotate", "validator"], "validator has no active key in"),
        (["keys", "list"], "no key registry at"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    keys: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([*argv, "--keys-dir", str(keys)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("modelguard keys: ") and message in line


def test_rotate_makes_a_new_active_key_and_keeps_the_old_public_key_retired(
    keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "--all", "--keys-dir", str(keys)]) == 0
    old = load_private_key("diagnoser", keys / "diagnoser.key")
    others = {p.name: p.read_bytes() for p in keys.glob("*.key") if p.name != "diagnoser.key"}
    capsys.readouterr()

    assert main(["keys", "rotate", "diagnoser", "--keys-dir", str(keys)]) == 0
    out = _out(capsys)

    new = load_private_key("diagnoser", keys / "diagnoser.key")
    assert new.keyid != old.keyid
    assert stat.S_IMODE((keys / "diagnoser.key").stat().st_mode) == 0o600
    registry = KeyRegistry.load(keys / "registry.json")
    retired, active = registry.get(old.keyid), registry.get(new.keyid)
    assert retired is not None and retired.owner == "diagnoser" and not retired.active
    assert retired.retired is not None and retired.created is not None and retired.retired >= retired.created
    assert active is not None and active.active and active.created == retired.retired
    assert [k.keyid for k in registry.entries() if k.owner == "diagnoser" and k.active] == [new.keyid]
    assert old.keyid in out and new.keyid in out
    assert not any(form in out for form in _private_forms(keys / "diagnoser.key"))
    assert {p.name: p.read_bytes() for p in keys.glob("*.key") if p.name != "diagnoser.key"} == others
    assert not [p for p in keys.iterdir() if p.name.startswith(".")], "no temporary file is left behind"


def test_list_shows_each_key_with_its_state_and_no_private_material(
    keys: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["keys", "create", "ledger", "diagnoser", "--keys-dir", str(keys)]) == 0
    first = load_private_key("diagnoser", keys / "diagnoser.key").keyid
    assert main(["keys", "rotate", "diagnoser", "--keys-dir", str(keys)]) == 0
    assert main(["keys", "rotate", "diagnoser", "--keys-dir", str(keys)]) == 0
    capsys.readouterr()

    assert main(["keys", "list", "--keys-dir", str(keys)]) == 0
    out = _out(capsys)

    lines = out.strip().splitlines()
    assert lines[0].split() == ["SERVICE", "KEY", "CREATED", "STATE"]
    rows = [line.split() for line in lines[1:]]
    assert [(r[0], r[3]) for r in rows] == [
        ("diagnoser", "active"),
        ("diagnoser", "retired"),
        ("diagnoser", "retired"),
        ("ledger", "active"),
    ]
    assert first in {r[1] for r in rows}
    registry = KeyRegistry.load(keys / "registry.json")
    assert {r[1] for r in rows} == {k.keyid for k in registry.entries()}
    for path in keys.glob("*.key"):
        assert not any(form in out for form in _private_forms(path))


def test_a_registry_written_before_rotation_existed_still_loads_with_every_key_active(tmp_path: Path) -> None:
    from libs.signing.keys import generate_key

    key = generate_key("ledger")
    raw = key.private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    document = {"keys": [{"keyid": key.keyid, "owner": "ledger", "public_key": base64.b64encode(raw).decode()}]}
    (tmp_path / "registry.json").write_text(json.dumps(document))

    [entry] = KeyRegistry.load(tmp_path / "registry.json").entries()

    assert (entry.keyid, entry.active, entry.created, entry.retired) == (key.keyid, True, None, None)


def test_a_keys_folder_that_cannot_be_written_is_exit_1(keys: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys.write_text("a file where the folder should be")
    assert main(["keys", "create", "ledger", "--keys-dir", str(keys)]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("modelguard keys: ")
