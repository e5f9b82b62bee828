"""A typo is an error naming the key, never a silently ignored setting (``repair_path:`` once widened the
permitted paths to everything)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from libs.bundle.load import BundleError, load_bundle
from libs.patch_guard.workspace_config import WorkspaceConfigError, workspace_config_from_document
from libs.policy.errors import PolicyError
from libs.policy.model_policy import parse_policy
from tests.support.tiny_bundle import make_tiny_bundle


def _edited_bundle(tmp_path: Path, edit) -> Path:
    root = make_tiny_bundle(tmp_path / "bundle")
    spec = yaml.safe_load((root / "bundle.yaml").read_text())
    edit(spec)
    (root / "bundle.yaml").write_text(yaml.safe_dump(spec))
    return root


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (lambda s: s["workspace"].update(repair_path=["**"]), "workspace.repair_path"),
        (lambda s: s["gate"].update(treshold=0.4), "gate.treshold"),
        (lambda s: s["model"].update(owner="me"), "model.owner"),
        (lambda s: s.update(metric={"baseline": {}}), "metric"),
    ],
)
def test_an_unknown_key_in_bundle_yaml_is_named(tmp_path: Path, edit, key: str) -> None:
    with pytest.raises(BundleError, match=rf"{key}: Extra inputs are not permitted"):
        load_bundle(_edited_bundle(tmp_path, edit))


def test_an_unknown_key_in_a_model_policy_is_named() -> None:
    policy = {
        "name": "m",
        "gate": {"metric": "f1", "direction": "higher_is_better", "tolerance": 0.02},
        "workspace": {"evaluate": ["python", "e.py"], "label": "y", "feature_modules": ["f.py"]},
        "repair_paths": ["**"],
    }
    with pytest.raises(PolicyError, match=r"^policies/m\.yaml: repair_paths: unknown key$"):
        parse_policy(yaml.safe_dump(policy).encode(), "policies/m.yaml")


def test_the_guard_refuses_a_workspace_config_with_an_unknown_key() -> None:
    with pytest.raises(WorkspaceConfigError, match="unknown key 'repair_path'"):
        workspace_config_from_document({"workspace": {"repair_path": ["**"], "label": "y"}}, "bundle.yaml")
