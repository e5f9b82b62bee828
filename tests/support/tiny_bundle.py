"""A tiny, fast bundle written into a temporary folder: a threshold "model" in plain Python, so tests of
loading, packing and the pipeline's plumbing run in milliseconds. Its metric is computed, never typed."""

from __future__ import annotations

import random
from pathlib import Path

import yaml

MODEL_URN = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,tiny-threshold,PROD)"

EVALUATE = '''"""Learn a threshold on x from the training rows and score accuracy on the evaluation rows."""
import argparse
import csv
import json

from tiny.features import feature


def rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


parser = argparse.ArgumentParser()
parser.add_argument("--train")
parser.add_argument("--eval")
args = parser.parse_args()
train, scored = rows(args.train), rows(args.eval)
positives = [feature(r) for r in train if r["label"] == "1"]
negatives = [feature(r) for r in train if r["label"] == "0"]
threshold = (sum(positives) / len(positives) + sum(negatives) / len(negatives)) / 2
hits = sum((feature(r) > threshold) == (r["label"] == "1") for r in scored)
print(json.dumps({"metrics": {"accuracy": round(hits / len(scored), 6)}}))
'''

PREDICT = '''"""Learn a threshold on x from the training rows; write a score per row of the features file."""
import argparse
import csv

from tiny.features import feature


def rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


parser = argparse.ArgumentParser()
parser.add_argument("--train")
parser.add_argument("--features")
parser.add_argument("--output")
args = parser.parse_args()
train, scored = rows(args.train), rows(args.features)
positives = [feature(r) for r in train if r["label"] == "1"]
negatives = [feature(r) for r in train if r["label"] == "0"]
threshold = (sum(positives) / len(positives) + sum(negatives) / len(negatives)) / 2
with open(args.output, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["row_id", "prediction"])
    for r in scored:
        writer.writerow([r["row_id"], int(feature(r) > threshold)])
'''
PREDICT_COMMAND = [
    "python",
    "predict.py",
    "--train",
    "{train}",
    "--features",
    "{features}",
    "--output",
    "{predictions}",
]
EVALUATE_COMMAND = ["python", "evaluate.py", "--train", "{train}", "--eval", "{eval}"]

FEATURES = {
    "base": 'def feature(row):\n    return float(row["x"])\n',
    "candidate": 'def feature(row):\n    return -float(row["x"])\n',
    "harmless": 'def feature(row):\n    value = float(row["x"])\n    return value\n',
}


def _window(path: Path, seed: int, rows: int = 200) -> None:
    rng = random.Random(seed)
    lines = ["x,label"]
    for _ in range(rows):
        label = rng.random() < 0.5
        lines.append(f"{rng.gauss(1.0 if label else -1.0, 0.7):.4f},{int(label)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_tiny_bundle(
    root: Path, *, candidate: str = "candidate", name: str = "tiny-threshold", contract: str = "both"
) -> Path:
    """``candidate`` picks the candidate's feature code: "candidate" (sign flipped: the gate fails) or
    "harmless" (a refactor: the gate passes). ``contract``: "predict" (the referee computes the metric),
    "evaluate" (self-reported) or "both" (the workspace declares both; ModelGuard uses predict)."""
    for revision, features in (("base", FEATURES["base"]), ("candidate", FEATURES[candidate])):
        tree = root / "workspace" / revision
        (tree / "tiny").mkdir(parents=True, exist_ok=True)
        (tree / "tiny" / "__init__.py").write_text("", encoding="utf-8")
        (tree / "tiny" / "features.py").write_text(features, encoding="utf-8")
        (tree / "evaluate.py").write_text(EVALUATE, encoding="utf-8")
        (tree / "predict.py").write_text(PREDICT, encoding="utf-8")
    for window in ("approval", "incident"):  # the same rows in both windows: only the code differs
        for seed, file_name in enumerate(("train.csv", "eval.csv"), start=11):
            _window(root / "data" / window / file_name, seed)
    spec = {
        "format": "modelguard-bundle/1",
        "name": name,
        "model": {"urn": MODEL_URN, "repository": "acme/tiny-threshold"},
        "gate": {"metric": "accuracy", "direction": "higher_is_better", "tolerance": 0.02},
        "workspace": {
            **({"predict": PREDICT_COMMAND} if contract in ("predict", "both") else {}),
            **({"evaluate": EVALUATE_COMMAND} if contract in ("evaluate", "both") else {}),
            "feature_modules": ["tiny/features.py"],
            "label": "label",
            "repair_paths": ["tiny/*.py"],
        },
    }
    (root / "bundle.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return root
