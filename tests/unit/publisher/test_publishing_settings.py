"""Publishing settings: fixture mode and dry run by default; writing needs explicit permission."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.settings import PublishingSettings, SettingsError, load_publishing_settings, load_settings
from services.publisher.fixture_channels import FixtureGitHub
from services.publisher.publication_channels import github_credentials, publication_channels
from services.publisher.secret_redaction import SecretRedactor


def test_the_defaults_publish_to_files_and_write_nothing_remote(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    for name in ("MODELGUARD_PUBLISH_MODE", "MODELGUARD_PUBLISH_APPLY", "MODELGUARD_GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    publishing = load_publishing_settings()
    assert publishing == PublishingSettings()
    assert publishing.mode == "fixture" and not publishing.applies("github") and not publishing.applies("datahub")
    assert publishing.github_api_url == "https://api.github.com"
    assert isinstance(publication_channels(load_settings()).github, FixtureGitHub)


def test_apply_names_channels_and_only_counts_in_live_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_PUBLISH_APPLY", "GitHub, datahub")
    monkeypatch.setenv("MODELGUARD_GITHUB_API_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("MODELGUARD_PUBLISH_MODE", "fixture")
    assert not load_publishing_settings().applies("github")
    monkeypatch.setenv("MODELGUARD_PUBLISH_MODE", "live")
    publishing = load_publishing_settings()
    assert publishing.apply == {"github", "datahub"} and publishing.applies("datahub")
    assert publishing.github_api_url == "http://127.0.0.1:9"


@pytest.mark.parametrize(("name", "value"), [("MODELGUARD_PUBLISH_APPLY", "teams"), ("MODELGUARD_PUBLISH_MODE", "x")])
def test_unknown_values_are_refused(monkeypatch: pytest.MonkeyPatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError):
        load_publishing_settings()


def test_applying_to_github_without_credentials_is_refused_and_a_dry_run_reads_anonymously(tmp_path: Path) -> None:
    applying = PublishingSettings(mode="live", apply=frozenset({"github"}))
    with pytest.raises(SettingsError, match="GITHUB_TOKEN"):
        github_credentials(applying, {}, SecretRedactor(), lambda: 0.0)
    dry = PublishingSettings(mode="live")
    assert github_credentials(dry, {}, SecretRedactor(), lambda: 0.0).authorization(lambda p, j: {}) is None
    app = PublishingSettings(mode="live", github_app_id="1", github_app_private_key_file=tmp_path / "k.pem")
    with pytest.raises(SettingsError, match="INSTALLATION_ID"):
        github_credentials(app, {}, SecretRedactor(), lambda: 0.0)
