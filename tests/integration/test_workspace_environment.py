"""A workspace environment for real: uv builds the public bundle's pinned environment (lightgbm, which ModelGuard
does not install) from the package index, the sandbox runs its interpreter read-only, and a second build of the
same digest is the cache's."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from libs.settings import EnvironmentSettings
from libs.workspace.runner import run_command
from libs.workspace_env.declaration import detect_declaration
from libs.workspace_env.resolve import built_environment
from modelguard.stack import REPO_ROOT

BUNDLE = REPO_ROOT / "fixtures" / "repos" / "hotel-cancellation-lightgbm"
IMPORTS = "import lightgbm, sklearn, sys; print(lightgbm.__version__, sys.prefix)"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache for the module: the environment is built once (by the first test) and reused after."""
    folder = tmp_path_factory.mktemp("environments")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MODELGUARD_ENVIRONMENTS_DIR", str(folder))
        yield folder


@pytest.fixture(scope="module")
def revision(cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("revision") / "base"
    shutil.copytree(BUNDLE / "workspace" / "base", tree)
    return tree


def test_the_declared_environment_is_built_by_uv_and_runs_in_the_sandbox(revision: Path, cache: Path) -> None:
    result = run_command(["python", "-c", IMPORTS], cwd=revision, timeout_s=120)
    assert result.succeeded, result.stderr
    version, prefix = result.stdout.split()
    assert version == "4.7.0" and Path(prefix).parent == cache
    assert result.sandbox is not None and result.sandbox.mechanism in ("bwrap", "none")


def test_modelguards_own_packages_are_not_importable_there(revision: Path) -> None:
    result = run_command(["python", "-c", "import yaml"], cwd=revision, timeout_s=60)  # ModelGuard's, not declared
    assert not result.succeeded and "No module named 'yaml'" in result.stderr


def test_the_environment_is_read_only_for_the_command(revision: Path) -> None:
    program = "import pathlib, sys; (pathlib.Path(sys.prefix) / 'lib' / 'x.py').write_text('1')"
    result = run_command(["python", "-c", program], cwd=revision, timeout_s=60)
    assert not result.succeeded and ("Read-only file system" in result.stderr or "Permission denied" in result.stderr)


def test_another_process_reuses_the_built_environment(revision: Path, cache: Path) -> None:
    declaration = detect_declaration(revision).declaration
    assert declaration is not None
    first = built_environment(declaration, EnvironmentSettings(cache_dir=cache))
    program = (
        "import logging; logging.basicConfig(level=logging.INFO);"
        "from pathlib import Path; from libs.settings import EnvironmentSettings;"
        "from libs.workspace_env.declaration import detect_declaration;"
        "from libs.workspace_env.resolve import built_environment;"
        f"d = detect_declaration(Path({str(revision)!r})).declaration;"
        f"b = built_environment(d, EnvironmentSettings(cache_dir=Path({str(cache)!r})));"
        "print(b.reused, b.root)"
    )
    again = subprocess.run([sys.executable, "-c", program], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert again.stdout.split() == ["True", str(first.root)]
    assert f"workspace environment {first.digest[:12]} (requirements.txt" in again.stderr
    assert "reused from the cache" in again.stderr
    assert any(package.startswith("lightgbm==4.7.0") for package in first.packages)
    assert "pytest==9.2.0" in first.packages
