"""The adversarial patch corpus: every case reaches the decision its table gives, for the reason it gives."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import EffectivePolicy, effective_policy, load_central_policy
from libs.patch_guard.report import CHECK_NAMES
from tests.unit.patch_guard.model_workspace import CONFIG, build_workspace

CORPUS = Path(__file__).parent / "corpus"
EXPECTATIONS: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "expectations.yaml").read_text(encoding="utf-8"))
REFUSED = sorted(name for name, case in EXPECTATIONS.items() if case["decision"] == "refused")
ACCEPTED = sorted(name for name, case in EXPECTATIONS.items() if case["decision"] == "accepted")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def policy() -> EffectivePolicy:
    return effective_policy(load_central_policy(), CONFIG)


def test_every_patch_has_an_expectation_and_every_expectation_a_patch() -> None:
    assert sorted(path.stem for path in CORPUS.glob("*.patch")) == sorted(EXPECTATIONS)


def test_the_corpus_is_adversarial_enough() -> None:
    assert len(REFUSED) >= 20 and len(ACCEPTED) >= 3
    assert all(EXPECTATIONS[name]["check"] in CHECK_NAMES for name in REFUSED)
    covered = {EXPECTATIONS[name]["check"] for name in REFUSED}
    assert {
        "paths_inside_workspace",
        "no_symlinks",
        "protected_paths",
        "forbidden_constructs",
        "max_changed_lines",
        "no_binary",
    } <= covered


@pytest.mark.parametrize("name", REFUSED)
def test_refused_with_the_right_reason(name: str, workspace: Path, policy: EffectivePolicy) -> None:
    report = check_patch(
        GuardRequest(patch=(CORPUS / f"{name}.patch").read_bytes(), policy=policy, workspace=workspace)
    )
    expected = EXPECTATIONS[name]["check"]
    assert not report.accepted
    assert expected in [check.name for check in report.failed()], report.failed()
    assert report.check(expected).findings, "a failed check names what failed"


@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted(name: str, workspace: Path, policy: EffectivePolicy) -> None:
    report = check_patch(
        GuardRequest(patch=(CORPUS / f"{name}.patch").read_bytes(), policy=policy, workspace=workspace)
    )
    assert report.accepted, report.failed()
    assert report.check("applies_cleanly").status == "passed"
    assert report.check("forbidden_constructs").status == "passed"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("name", ACCEPTED)
def test_accepted_patches_apply_with_git(name: str, workspace: Path) -> None:
    """What the guard accepts is what the validator's ``git apply`` applies: the guard read the same diff."""
    result = subprocess.run(
        ["git", "apply", "--check", str(CORPUS / f"{name}.patch")],
        cwd=workspace,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_CEILING_DIRECTORIES": str(workspace.parent)},
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_every_report_lists_every_check_in_order(workspace: Path, policy: EffectivePolicy) -> None:
    for name in EXPECTATIONS:
        report = check_patch(
            GuardRequest(patch=(CORPUS / f"{name}.patch").read_bytes(), policy=policy, workspace=workspace)
        )
        assert tuple(check.name for check in report.checks) == CHECK_NAMES
