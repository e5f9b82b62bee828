"""``MODELGUARD_SCRATCH_DIR``: where each service lays out workspaces and keeps its commands' temporary files."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from libs.settings import SCRATCH_DIR_ENV, SettingsError, load_settings
from libs.temporary_files import keep_temporary_files_in


def test_unset_each_service_keeps_its_scratch_under_its_state_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.delenv(SCRATCH_DIR_ENV, raising=False)
    settings = load_settings()
    assert settings.scratch_root is None
    assert settings.scratch_dir("validator") == tmp_path.resolve() / "state" / "validator" / "scratch"


def test_set_each_service_has_its_own_folder_under_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(SCRATCH_DIR_ENV, str(tmp_path / "scratch"))
    settings = load_settings()
    assert settings.scratch_dir("diagnoser") == tmp_path / "scratch" / "diagnoser"
    assert settings.scratch_dir("repairer") == tmp_path / "scratch" / "repairer"


def test_a_relative_scratch_folder_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    monkeypatch.setenv(SCRATCH_DIR_ENV, "scratch")
    with pytest.raises(SettingsError, match="MODELGUARD_SCRATCH_DIR must be an absolute path"):
        load_settings()


def test_a_service_s_temporary_files_go_to_its_scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", tempfile.tempdir)  # the process's setting, put back after the test
    folder = tmp_path / "scratch" / "validator" / "tmp"
    keep_temporary_files_in(folder)
    assert folder.stat().st_mode & 0o777 == 0o700
    with tempfile.TemporaryDirectory(prefix="modelguard-run-") as staging:
        assert Path(staging).parent == folder
