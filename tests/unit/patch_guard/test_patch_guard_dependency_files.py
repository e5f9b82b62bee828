"""The files a workspace's environment is built from are never edited by a repair: the central policy protects
them, so a patch touching one is refused, whatever the workspace's repair paths permit."""

from __future__ import annotations

import pytest

from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import load_central_policy, narrowed_policy
from libs.patch_guard.workspace_config import WorkspaceRepairConfig
from libs.policy.central import DEFAULT_CENTRAL_POLICY
from services.repairer.unified_diff import render_unified_diff

OPEN = narrowed_policy(load_central_policy(DEFAULT_CENTRAL_POLICY), WorkspaceRepairConfig(path_scopes=(("**",),)))


@pytest.mark.parametrize(
    ("path", "before", "after"),
    [
        ("requirements.txt", "lightgbm==4.7.0\n", "lightgbm==4.6.0\n"),
        ("uv.lock", 'version = 1\n[[package]]\nname = "numpy"\n', 'version = 1\n[[package]]\nname = "numpy2"\n'),
        ("pyproject.toml", '[project]\ndependencies = ["numpy"]\n', '[project]\ndependencies = ["numpy<2"]\n'),
        ("services/requirements-dev.txt", "pytest==9.2.0\n", "pytest==8.0.0\n"),
    ],
)
def test_a_repair_of_a_dependency_file_is_refused(path: str, before: str, after: str) -> None:
    report = check_patch(GuardRequest(patch=render_unified_diff(path, before, after), policy=OPEN))
    assert not report.accepted
    assert "protected_paths" in [check.name for check in report.failed()]
