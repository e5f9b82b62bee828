"""The public scenario suite (fixtures/scenarios) and its seeded generator (fixtures/suite_generator)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fixtures.suite_generator.suite import GENERATED, MANIFEST, build_suite
from libs.bundle.load import load_bundle
from libs.referee.metrics import gate_problem

REPO = Path(__file__).resolve().parents[3]
SCENARIOS = REPO / "fixtures" / "scenarios"
BUNDLES = sorted(path.parent for path in SCENARIOS.glob("*/bundle.yaml"))

OUTCOMES = {"gate_passed", "repair_validated", "repair_withheld", "validation_failed", "no_code_repair", "abstained"}
# docs/scenarios.md, "Hypotheses": the kinds and the repairs each may carry.
REPAIRS = {
    "feature_transformation": {"guarded_division", "revert_change"},
    "training_config_change": {"revert_change"},
    "upstream_schema_change": {"column_rename"},
    "type_conversion": {"numeric_coercion"},
    "category_mapping": {"unseen_category"},
    "source_data_quality": {"null_guard"},
    "covariate_drift": set(),
    "label_shift": set(),
}
REQUIRED = (
    "bundle.yaml",
    "expected.json",
    "workspace/base",
    "workspace/candidate",
    "data/approval/train.csv",
    "data/approval/eval.csv",
    "data/incident/train.csv",
    "data/incident/eval.csv",
    "datahub/metadata.json",
    "datahub/changes.json",
)


def files_under(root: Path) -> dict[str, bytes]:
    return {str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()}


def expected_of(bundle: Path) -> dict:
    return json.loads((bundle / "expected.json").read_text(encoding="utf-8"))


def test_the_same_seed_writes_the_same_bytes(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    build_suite(first, seed=3)
    build_suite(second, seed=3)
    written = files_under(first)
    assert written == files_under(second)
    assert sum(name.endswith("bundle.yaml") for name in written) >= 13


def test_a_variant_suite_differs_from_the_public_one(tmp_path: Path) -> None:
    build_suite(tmp_path / "public", seed=0, only=["fraud"])
    build_suite(tmp_path / "variant", seed=11, only=["fraud"])
    public = next((tmp_path / "public").glob("*/bundle.yaml")).parent
    variant = next((tmp_path / "variant").glob("*/bundle.yaml")).parent
    assert public.name != variant.name
    assert (public / "data/approval/train.csv").read_bytes() != (variant / "data/approval/train.csv").read_bytes()


def test_the_public_suite_is_what_the_generator_writes(tmp_path: Path) -> None:
    build_suite(tmp_path, seed=0)
    manifest = json.loads((tmp_path / MANIFEST).read_text(encoding="utf-8"))
    assert (SCENARIOS / MANIFEST).read_text(encoding="utf-8") == (tmp_path / MANIFEST).read_text(encoding="utf-8")
    for entry in manifest["bundles"]:
        for relative in GENERATED:
            fresh, stored = tmp_path / entry["name"] / relative, SCENARIOS / entry["name"] / relative
            if fresh.is_dir():
                assert files_under(fresh) == files_under(stored), f"{entry['name']}/{relative} is stale"
            else:
                assert fresh.read_bytes() == stored.read_bytes(), f"{entry['name']}/{relative} is stale"


@pytest.mark.parametrize("bundle", BUNDLES, ids=[bundle.name for bundle in BUNDLES])
def test_bundle_has_the_required_files_and_a_valid_expectation(bundle: Path) -> None:
    for relative in REQUIRED:
        assert (bundle / relative).exists(), f"{bundle.name}: missing {relative}"
    loaded = load_bundle(bundle)
    assert loaded.name == bundle.name
    expected = expected_of(bundle)
    assert set(expected) <= {"outcome", "hypothesis", "repair_strategy"}
    assert expected["outcome"] in OUTCOMES
    hypothesis = expected["hypothesis"]
    if expected["outcome"] in ("gate_passed", "abstained"):
        assert hypothesis is None
    else:
        assert hypothesis in REPAIRS
    if expected["outcome"] == "repair_validated":
        assert expected["repair_strategy"] in REPAIRS[hypothesis]
    else:
        assert expected.get("repair_strategy") is None
    metadata = json.loads((bundle / "datahub/metadata.json").read_text(encoding="utf-8"))
    assert any(record["entityUrn"] == loaded.spec.model.urn for record in metadata)
    changes = json.loads((bundle / "datahub/changes.json").read_text(encoding="utf-8"))
    assert all("previousAspectValue" in change and "aspectName" in change for change in changes)
    config = yaml.safe_load((bundle / "bundle.yaml").read_text(encoding="utf-8"))
    for column in config["workspace"].get("categorical_defaults") or {}:
        assert column in (bundle / "data/incident/eval.csv").read_text(encoding="utf-8").splitlines()[0].split(",")


@pytest.mark.parametrize("bundle", BUNDLES, ids=[bundle.name for bundle in BUNDLES])
def test_bundle_is_refereed(bundle: Path) -> None:
    """Every public bundle declares predict, not evaluate: ModelGuard computes its gate metric itself, so the
    metric must be one the referee knows, in its direction; nothing in the bundle still names evaluate.py."""
    spec = load_bundle(bundle).spec
    assert spec.workspace.predict is not None and spec.workspace.evaluate is None
    assert spec.workspace.reported_metrics == ()
    assert gate_problem(spec.gate.metric, spec.gate.direction) is None
    entry_point = spec.workspace.predict[1]
    for revision in ("base", "candidate"):
        tree = bundle / "workspace" / revision
        assert (tree / entry_point).is_file(), f"{revision} has no {entry_point}"
        assert not (tree / "evaluate.py").exists()
        for path in tree.rglob("*"):
            if path.is_file():
                assert "evaluate.py" not in path.read_text(encoding="utf-8"), path.relative_to(bundle)
    for name in ("metadata.json", "changes.json"):
        assert "evaluate.py" not in (bundle / "datahub" / name).read_text(encoding="utf-8")


def test_the_suite_covers_every_hypothesis_and_outcome() -> None:
    expectations = [expected_of(bundle) for bundle in BUNDLES]
    assert len(expectations) >= 13
    assert set(REPAIRS) <= {expected["hypothesis"] for expected in expectations}
    outcomes = [expected["outcome"] for expected in expectations]
    assert outcomes.count("abstained") >= 2
    assert outcomes.count("gate_passed") >= 1
    directions = [
        yaml.safe_load((bundle / "bundle.yaml").read_text(encoding="utf-8"))["gate"]["direction"] for bundle in BUNDLES
    ]
    assert "lower_is_better" in directions
    lower_and_repaired = [
        bundle.name
        for bundle, direction, expected in zip(BUNDLES, directions, expectations, strict=True)
        if direction == "lower_is_better" and expected["outcome"] == "repair_validated"
    ]
    assert lower_and_repaired, "a lower-is-better model with a repairable regression"


def test_the_suite_stays_small() -> None:
    total = sum(path.stat().st_size for bundle in BUNDLES for path in bundle.rglob("*") if path.is_file())
    assert total < 8 * 1024 * 1024
    for bundle in BUNDLES:
        for window in ("approval", "incident"):
            for part in ("train", "eval"):
                rows = (bundle / "data" / window / f"{part}.csv").read_text(encoding="utf-8").count("\n") - 1
                assert 1500 <= rows <= 3000, f"{bundle.name} {window}/{part}: {rows} rows"
