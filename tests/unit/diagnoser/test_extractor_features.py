"""Feature recomputation (same rows, two revisions) and feature drift (same code, two windows)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.extractors.feature_drift import feature_drift_evidence
from services.diagnoser.extractors.feature_recomputation import feature_recomputation_evidence
from services.diagnoser.feature_runs import FeatureMatrix, run_features
from services.diagnoser.inputs import WorkspaceConfig

THRESHOLDS = central_diagnosis_policy()
FEATURES = """import argparse, csv
parser = argparse.ArgumentParser()
parser.add_argument("--data")
parser.add_argument("--output")
args = parser.parse_args()
rows = list(csv.DictReader(open(args.data, newline="")))
with open(args.output, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["per_month"])
    for row in rows:
        months = float(row["months"])
        writer.writerow([repr(float(row["total"]) / months if months else float("inf"))])
"""


def matrix(revision: str, frame: pd.DataFrame) -> FeatureMatrix:
    return FeatureMatrix(revision=revision, data="incident", frame=frame)


def test_identical_features_on_the_same_rows() -> None:
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.5, 0.5, np.nan]})
    item = feature_recomputation_evidence(matrix("base", frame), matrix("candidate", frame.copy()), THRESHOLDS)
    assert item.values["differ"] is False and item.strength == 0.0
    assert item.values["base_invalid"] == 1 and item.values["candidate_invalid"] == 1


def test_candidate_features_that_differ_and_turn_invalid() -> None:
    base = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.0, 1.0, 2.0, 3.0]})
    candidate = base.assign(a=[1.0, np.nan, 3.0, 400.0])
    item = feature_recomputation_evidence(matrix("base", base), matrix("candidate", candidate), THRESHOLDS)
    values = item.values
    assert values["differ"] is True and values["changed_row_share"] == 0.5
    assert values["changed_features"] == ["a"] and values["candidate_invalid_by_feature"] == {"a": 1}
    assert values["out_of_base_range"] == {"a": 1, "b": 0} and item.strength == 1.0


def test_a_missing_matrix_is_reported_unavailable() -> None:
    missing = FeatureMatrix(revision="base", data="incident", frame=None, error="no features command")
    item = feature_recomputation_evidence(missing, missing, THRESHOLDS)
    assert item.values == {"available": False, "reason": "no features command"} and item.strength == 0.0


def test_feature_drift_between_windows_under_the_same_code() -> None:
    rng = np.random.default_rng(0)
    before = pd.DataFrame({"x": rng.normal(0, 1, 500), "y": rng.normal(0, 1, 500)})
    after = pd.DataFrame({"x": rng.normal(1.5, 1, 500), "y": rng.normal(0, 1, 500)})
    item = feature_drift_evidence(matrix("base", before), matrix("base", after), THRESHOLDS)
    assert item.values["drifted"] == ["x"] and item.values["per_feature"]["x"]["psi"] > 1.0 and item.strength == 1.0


def test_the_features_command_really_runs_and_non_finite_cells_are_invalid(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "features.py").write_text(FEATURES, encoding="utf-8")
    data = tmp_path / "rows.csv"
    data.write_text("total,months\n10,2\n7,0\n9,3\n", encoding="utf-8")
    config = WorkspaceConfig(
        evaluate=("python", "x.py"),
        label="y",
        features=("python", "features.py", "--data", "{data}", "--output", "{output}"),
        timeout_s=60,
    )
    run = run_features("base", tree, data, "incident", config, tmp_path / "scratch")
    assert run.frame is not None and run.frame["per_month"].tolist()[0] == 5.0
    assert int(run.frame["per_month"].isna().sum()) == 1
    assert not any(tree.glob("*.csv"))
    absent = run_features(
        "base",
        tree,
        data,
        "incident",
        WorkspaceConfig(evaluate=("python",), label="y", feature_modules=("pkg/features.py",)),
        tmp_path,
    )
    assert absent.frame is None and absent.error


def test_a_failing_features_command_is_reported_without_its_folders(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "features.py").write_text("import sys\nsys.exit(sys.argv[-1] + ' is broken')\n", encoding="utf-8")
    data = tmp_path / "data" / "rows.csv"
    data.parent.mkdir()
    data.write_text("total,months\n10,2\n", encoding="utf-8")
    config = WorkspaceConfig(
        evaluate=("python", "x.py"),
        label="y",
        features=("python", "features.py", "--data", "{data}", "--output", "{output}"),
        timeout_s=60,
    )
    run = run_features("candidate", tree, data, "incident", config, tmp_path / "scratch")
    assert run.frame is None and run.error is not None
    assert run.error.startswith("candidate revision on the incident data: the features command failed: non-zero exit")
    assert run.error.endswith("<scratch>/candidate-incident-features.csv is broken")
    assert str(tmp_path) not in run.error
