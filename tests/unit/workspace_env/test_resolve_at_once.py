"""Two commands that run at once (the referee's two revisions) and declare the same environment: one build or one
cache read, the other waits for it and takes it from memory; the log says it once."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import libs.workspace_env.resolve as resolve
from libs.settings import EnvironmentSettings
from libs.workspace_env.build import BuiltEnvironment
from libs.workspace_env.declaration import detect_declaration


def test_the_same_environment_asked_for_at_once_is_built_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    tree = tmp_path / "revision"
    tree.mkdir()
    (tree / "requirements.txt").write_text("numpy==2.4.6\n")
    declaration = detect_declaration(tree).declaration
    assert declaration is not None
    settings = EnvironmentSettings(cache_dir=tmp_path / "environments")
    builds: list[str] = []
    both_asked = threading.Barrier(2, timeout=30)

    def slow_build(declaration: Any, digest: str, *args: Any) -> BuiltEnvironment:
        builds.append(digest)
        time.sleep(0.3)  # the other caller arrives meanwhile; without the per-digest lock it builds too
        root = tmp_path / "environments" / digest
        root.mkdir(parents=True, exist_ok=True)
        return BuiltEnvironment(root, digest, "requirements.txt", ("numpy==2.4.6",), 0.3, reused=False)

    monkeypatch.setattr(resolve, "ensure_environment", slow_build)
    got: list[BuiltEnvironment] = []

    def ask() -> None:
        both_asked.wait()
        got.append(resolve.built_environment(declaration, settings, version="uv-test"))

    with caplog.at_level(logging.INFO, logger="modelguard.environments"):
        threads = [threading.Thread(target=ask) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    assert len(builds) == 1 and len(got) == 2 and got[0] == got[1]
    assert len([r for r in caplog.records if "built by uv" in r.getMessage()]) == 1
