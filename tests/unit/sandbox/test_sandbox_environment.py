"""The environment of a sandboxed command is built from nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from libs.sandbox.environment import PINNED, sandbox_environment


def test_nothing_of_the_parent_environment_gets_through(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("GITHUB_TOKEN", "MODELGUARD_GITHUB_TOKEN", "PYTHONPATH", "HTTPS_PROXY", "VIRTUAL_ENV"):
        monkeypatch.setenv(name, "secret-xyz")
    monkeypatch.setenv("PATH", "/somewhere/else:/usr/bin")
    env = sandbox_environment(tmp_path / "home", tmp_path / "tmp")
    assert set(env) == {"PATH", "HOME", "TMPDIR", *PINNED}
    assert "secret-xyz" not in "".join(env.values())
    assert env["PATH"] == f"{Path(sys.executable).parent}:/usr/bin:/bin"
    assert (env["HOME"], env["TMPDIR"]) == (str(tmp_path / "home"), str(tmp_path / "tmp"))
    assert env["PYTHONHASHSEED"] == "0" and env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["LANG"] == env["LC_ALL"] == "C.UTF-8"
