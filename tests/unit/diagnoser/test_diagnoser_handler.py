"""diagnose_incident on a toy workspace: the features command really runs on both trees."""

from __future__ import annotations

import json
from pathlib import Path

from services.diagnoser.handler import diagnose_incident

GUARDED = "def per_month(total, months):\n    if months <= 0:\n        return 0.0\n    return total / months\n"
# numpy division by zero yields inf (with a warning) instead of raising, as in the churn model
UNGUARDED = "import numpy as np\n\n\ndef per_month(total, months):\n    return float(np.float64(total) / months)\n"
FEATURES = """import argparse
import csv

from toy.calc import per_month

parser = argparse.ArgumentParser()
parser.add_argument("--data")
parser.add_argument("--output")
args = parser.parse_args()
with open(args.data, newline="") as handle:
    rows = list(csv.DictReader(handle))
with open(args.output, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["per_month"])
    writer.writerows([repr(per_month(float(row["total"]), int(row["months"])))] for row in rows)
"""
SPEC = {"timeout_s": 60, "features": ["python", "-m", "toy.features", "--data", "{data}", "--output", "{output}"]}
POLICY = {"abstain_below": 0.6, "min_margin": 0.15}


def tree(root: Path, calc: str, train: str = "C = 1.0\n") -> Path:
    files = {"toy/__init__.py": "", "toy/calc.py": calc, "toy/features.py": FEATURES, "toy/train.py": train}
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def data(tmp_path: Path) -> Path:
    path = tmp_path / "customers.csv"
    path.write_text("total,months\n10,2\n7,0\n9,3\n", encoding="utf-8")
    return path


def test_changed_feature_function_that_creates_invalid_values(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", GUARDED)
    candidate = tree(tmp_path / "candidate", UNGUARDED)
    outcome = diagnose_incident(base, candidate, data(tmp_path), SPEC, POLICY)
    assert (outcome.invalid_values.base, outcome.invalid_values.candidate) == (0, 1)
    assert outcome.decision == "diagnosed" and outcome.chosen_hypothesis == "feature_transformation"
    assert outcome.suspected_file == "toy/calc.py" and outcome.suspected_function == "per_month"
    assert outcome.suspected is not None and outcome.suspected.divisor == "months"
    assert (outcome.source_anomaly_column, outcome.source_anomalies) == ("months", 1)
    json.dumps(outcome.model_dump(mode="json"))


def test_change_off_the_feature_path_points_at_training(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", GUARDED)
    candidate = tree(tmp_path / "candidate", GUARDED, train="C = 0.01\n")
    outcome = diagnose_incident(base, candidate, data(tmp_path), SPEC, POLICY)
    assert outcome.chosen_hypothesis == "training_configuration"
    assert outcome.changed_files == ("toy/train.py",)
    assert outcome.feature_files == ("toy/__init__.py", "toy/calc.py", "toy/features.py")
    assert outcome.suspected is None


def test_abstains_when_nothing_explains_a_regression(tmp_path: Path) -> None:
    base = tree(tmp_path / "base", GUARDED)
    candidate = tree(tmp_path / "candidate", GUARDED)
    outcome = diagnose_incident(
        base,
        candidate,
        data(tmp_path),
        SPEC,
        POLICY,
        gate_policy={"metric": "f1", "direction": "higher_is_better", "tolerance": 0.02},
        reported_metrics={"base": {"f1": 0.8}, "candidate": {"f1": 0.7}},
    )
    assert outcome.decision == "abstained"
    assert outcome.result.decision == "abstained" and outcome.abstention_reason
    assert outcome.chosen_hypothesis is None and outcome.suspected is None
