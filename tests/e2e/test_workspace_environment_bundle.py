"""Issue 19's workspace environments end to end: the public bundle whose model needs lightgbm (a library ModelGuard
does not install) is investigated in one process; its environment is built by uv from its requirements.txt, every
phase's commands run with that environment's interpreter, and the repair is validated with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from modelguard.cli import main
from modelguard.stack import REPO_ROOT

pytestmark = [pytest.mark.e2e]

BUNDLE = REPO_ROOT / "fixtures" / "repos" / "hotel-cancellation-lightgbm"


def test_the_lightgbm_bundle_is_repaired_in_its_own_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MODELGUARD_ENVIRONMENTS_DIR", str(tmp_path / "environments"))
    code = main(["investigate", str(BUNDLE), "--out", str(tmp_path / "out")])
    said = capsys.readouterr()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    expected = json.loads((BUNDLE / "expected.json").read_text())
    assert (summary["outcome"], code) == (expected["outcome"], 10), said.out + said.err
    assert summary["diagnosis"]["hypothesis"] == expected["hypothesis"]
    assert summary["repair"]["strategy"] == expected["repair_strategy"]
    assert summary["repair"]["files"] == ["config/lgbm_params.json"]
    assert summary["metric"]["after_repair"] >= summary["metric"]["baseline"] - summary["metric"]["tolerance"]
    [built] = [line for line in said.err.splitlines() if "workspace environment" in line]
    assert "(requirements.txt," in built and "built by uv in" in built  # once per process, then from memory
    [environment] = [p for p in (tmp_path / "environments").iterdir() if p.is_dir() and not p.name.startswith(".")]
    record = json.loads((environment / "modelguard-environment.json").read_text())
    assert "lightgbm==4.7.0" in record["packages"]
