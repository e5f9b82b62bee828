"""What the sandbox hides: ModelGuard's keys, ledger, artifacts and state from its settings and environment,
the system's credentials, every home's dot-entries and the central policy's ``sandbox.hidden``."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.sandbox.protected_paths import protected_paths
from libs.settings import load_settings


@pytest.fixture
def settings_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "mg"
    monkeypatch.setenv("MODELGUARD_HOME", str(home))
    for name in ("MODELGUARD_KEYS_DIR", "MODELGUARD_ARTIFACTS_DIR", "MODELGUARD_LEDGER_URL"):
        monkeypatch.delenv(name, raising=False)
    return home


def test_keys_registry_ledger_and_artifacts_are_secrets_and_the_home_private(settings_home: Path) -> None:
    protected = protected_paths(settings=load_settings(), environment={})
    for secret in ("keys", "keys/registry.json", "artifacts", "ledger.sqlite", "ledger.sqlite-wal"):
        assert settings_home / secret in protected.secrets
    assert settings_home in protected.private and settings_home not in protected.secrets
    assert {Path("/etc/modelguard"), Path("/etc/shadow"), Path("/etc/gshadow"), Path("/etc/sudoers")} <= set(
        protected.secrets
    )
    assert {Path("/root"), Path("/home"), Path.home()} <= set(protected.private)


def test_key_and_credential_files_named_by_the_environment_are_secrets(settings_home: Path) -> None:
    environment = {
        "MODELGUARD_SIGNING_KEY_FILE": "/etc/modelguard/signing/ledger.key",
        "MODELGUARD_REPORTER_KEY_FILE": "/srv/reporter.key",
        "GOOGLE_APPLICATION_CREDENTIALS": "/srv/gcp.json",
        "MODELGUARD_POLICY_DIR": "/srv/policies",
        "MODELGUARD_LOG_LEVEL": "INFO",
    }
    protected = protected_paths(settings=load_settings(), environment=environment)
    assert {Path("/srv/reporter.key"), Path("/srv/gcp.json")} <= set(protected.secrets)
    assert Path("/srv/policies") in protected.private


def test_the_policys_hidden_paths_are_secrets_and_hold_what_lies_inside(settings_home: Path) -> None:
    protected = protected_paths(["/srv/vault"], settings=load_settings(), environment={})
    assert protected.secret_holding(Path("/srv/vault/token")) == Path("/srv/vault")
    assert protected.secret_holding(Path("/srv/other")) is None


def test_dot_entries_of_the_users_home_are_secrets(settings_home: Path) -> None:
    protected = protected_paths(settings=load_settings(), environment={})
    dot_entries = [entry for entry in Path.home().iterdir() if entry.name.startswith(".")]
    assert all(entry in protected.secrets for entry in dot_entries)


# this process's own set, kept while what it is made from holds


def test_this_processs_own_set_is_kept_while_nothing_it_is_made_from_changed(settings_home: Path) -> None:
    first = protected_paths(["/srv/vault"])
    assert protected_paths(["/srv/vault"]) is first
    assert protected_paths(["/srv/other"]) is not first  # another policy: found again
    assert Path("/srv/other") in protected_paths(["/srv/other"]).secrets


def test_a_setting_changed_is_seen_at_the_next_command(settings_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = protected_paths()
    monkeypatch.setenv("MODELGUARD_KEYS_DIR", "/srv/moved-keys")
    after = protected_paths()
    assert Path("/srv/moved-keys") in after.secrets and Path("/srv/moved-keys") not in before.secrets


def test_a_dot_entry_made_in_a_home_is_hidden_at_the_next_command(
    tmp_path: Path, settings_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert protected_paths() is protected_paths()  # kept
    (home / ".aws").mkdir()  # the home's entries changed: the set is found again
    assert home / ".aws" in protected_paths().secrets
    (home / ".aws").rename(home / ".aws-old")
    found = protected_paths().secrets
    assert home / ".aws-old" in found and home / ".aws" not in found


def test_a_home_that_does_not_exist_is_still_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "gone"))
    assert tmp_path / "gone" in protected_paths().private
