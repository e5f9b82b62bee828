"""A workspace environment as the sandbox takes it: only a built environment inside the cache, whose python leads
to ModelGuard's base installation; shown instead of ModelGuard's own environment, first on PATH."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import libs.sandbox.confinement as confinement
from libs.sandbox.confinement import interpreter_paths
from libs.sandbox.environment import search_path
from libs.sandbox.process import CommandNotAllowed, resolve_program
from libs.sandbox.workspace_interpreter import WorkspaceInterpreter, checked


def built(cache: Path, name: str = "a" * 64, target: str | None = None) -> WorkspaceInterpreter:
    root = cache / name
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text("home = x\n")
    os.symlink(target or os.path.realpath(sys.executable), root / "bin" / "python")
    return WorkspaceInterpreter(root=root, cache=cache)


def test_a_built_environment_is_run_for_python_and_shown_instead_of_modelguards(tmp_path: Path) -> None:
    environment = checked(built(tmp_path / "envs"))
    assert resolve_program(["python", "predict.py"], environment.python) == [str(environment.python), "predict.py"]
    shown = interpreter_paths(environment)
    assert shown[0] == environment.root and Path(os.path.realpath(sys.base_prefix)) in shown
    if os.path.realpath(sys.prefix) != os.path.realpath(sys.base_prefix):
        assert Path(os.path.realpath(sys.prefix)) not in shown  # ModelGuard's own packages stay out of sight
    assert search_path(environment).split(":")[0] == str(environment.bin_dir)


def test_without_an_environment_modelguards_interpreter_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_program(["python", "x.py"]) == [sys.executable, "x.py"]
    assert Path(os.path.realpath(sys.prefix)) in interpreter_paths()
    resolved: list[str] = []
    real = os.path.realpath

    def counted(path: str, **options: bool) -> str:
        resolved.append(path)
        return real(path, **options)

    monkeypatch.setattr(os.path, "realpath", counted)
    confinement._own_interpreter_paths.cache_clear()
    first = interpreter_paths()
    once = len(resolved)
    assert once and interpreter_paths() == first and len(resolved) == once  # resolved once per process


def test_an_environment_outside_the_cache_is_refused(tmp_path: Path) -> None:
    elsewhere = built(tmp_path / "elsewhere")
    with pytest.raises(CommandNotAllowed, match="not a folder of the cache"):
        checked(WorkspaceInterpreter(root=elsewhere.root, cache=tmp_path / "envs"))


def test_a_folder_that_is_no_environment_is_refused(tmp_path: Path) -> None:
    (tmp_path / "envs" / "b" / "bin").mkdir(parents=True)
    with pytest.raises(CommandNotAllowed, match=r"no pyvenv\.cfg"):
        checked(WorkspaceInterpreter(root=tmp_path / "envs" / "b", cache=tmp_path / "envs"))


def test_a_python_leading_outside_the_base_installation_is_refused(tmp_path: Path) -> None:
    rogue = tmp_path / "rogue-python"
    rogue.write_text("#!/bin/sh\n")
    rogue.chmod(0o755)
    with pytest.raises(CommandNotAllowed, match="its python leads to"):
        checked(built(tmp_path / "envs", target=str(rogue)))


def test_a_link_out_of_the_cache_is_refused(tmp_path: Path) -> None:
    real = built(tmp_path / "elsewhere")
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "c").symlink_to(real.root)
    with pytest.raises(CommandNotAllowed, match="not a folder of the cache"):
        checked(WorkspaceInterpreter(root=tmp_path / "envs" / "c", cache=tmp_path / "envs"))
