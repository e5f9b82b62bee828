"""Loading a bundle: a complete one loads; each missing or unsafe part is one readable error."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml

from libs.bundle.load import BundleError, is_bundle, load_bundle
from tests.support.tiny_bundle import MODEL_URN, make_tiny_bundle


def test_a_complete_bundle_loads_with_its_gate_and_workspace_config(tmp_path: Path) -> None:
    bundle = load_bundle(make_tiny_bundle(tmp_path / "b"))
    assert bundle.name == "tiny-threshold"
    assert bundle.spec.model.urn == MODEL_URN
    assert bundle.spec.gate.metric == "accuracy"
    assert bundle.spec.workspace.command_spec()["evaluate"][-1] == "{eval}"
    assert bundle.tree("candidate").joinpath("tiny/features.py").is_file()
    assert bundle.metadata_file is None and bundle.changes_file is None
    assert is_bundle(bundle.root) and not is_bundle(tmp_path)


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / "bundle.yaml").unlink(), "not a bundle"),
        (lambda root: (root / "data" / "incident" / "eval.csv").unlink(), "missing data/incident/eval.csv"),
        (lambda root: shutil.rmtree(root / "workspace" / "base"), "missing workspace/base/"),
        (
            lambda root: (root / "bundle.yaml").write_text("format: [", encoding="utf-8"),
            r"bundle\.yaml:1:\d+: not YAML",
        ),
        (
            lambda root: os.symlink("/etc/passwd", root / "workspace" / "candidate" / "passwd"),
            "links are not allowed",
        ),
        (lambda root: (root / "workspace" / "base" / ".git").mkdir(), "plain files, not a repository"),
        (
            lambda root: (root / "bundle.yaml").write_text("format: " + "[" * 5_000 + "]" * 5_000, encoding="utf-8"),
            r"bundle\.yaml: not YAML this reader can take: nested past the parser's limit",
        ),
        (
            lambda root: (root / "bundle.yaml").write_text("a: " + "{b: " * 3_000 + "1" + "}" * 3_000),
            r"bundle\.yaml: not YAML this reader can take: nested past the parser's limit",
        ),
    ],
)
def test_a_damaged_bundle_is_refused_with_one_line(tmp_path: Path, damage, message: str) -> None:
    root = make_tiny_bundle(tmp_path / "b")
    damage(root)
    with pytest.raises(BundleError, match=message) as raised:
        load_bundle(root)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda spec: spec.update(format="modelguard-bundle/9"), "format"),
        (lambda spec: spec["gate"].update(direction="sideways"), "gate.direction"),
        (lambda spec: [spec["workspace"].pop(k) for k in ("evaluate", "predict")], "workspace: .*a predict command"),
        (lambda spec: spec["model"].update(urn="urn:li:dataset:x"), "model.urn"),
        (lambda spec: spec.update(surprise=1), "surprise"),
    ],
)
def test_an_invalid_bundle_yaml_names_the_field(tmp_path: Path, edit, where: str) -> None:
    root = make_tiny_bundle(tmp_path / "b")
    spec = yaml.safe_load((root / "bundle.yaml").read_text())
    edit(spec)
    (root / "bundle.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(BundleError, match=where):
        load_bundle(root)


def test_a_workspace_config_must_name_its_feature_code(tmp_path: Path) -> None:
    root = make_tiny_bundle(tmp_path / "b")
    spec = yaml.safe_load((root / "bundle.yaml").read_text())
    spec["workspace"].pop("feature_modules")
    (root / "bundle.yaml").write_text(yaml.safe_dump(spec))
    with pytest.raises(BundleError, match="name the feature code"):
        load_bundle(root)
