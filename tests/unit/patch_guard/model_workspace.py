"""The model workspace the patch corpus is written against: a small churn-model repository with its tests,
evaluation entry point (it imports the package, so what a patch puts there runs before the metric is
printed), build files, CI configuration, two symbolic links a patch could hide behind, generated files of
every kind the guard recognises, and modules of the shapes real model code has (a scikit-learn transformer,
a ColumnTransformer pipeline, vectorised pandas/numpy features, per-record helpers, a loader, a report),
each carrying the kind of fault a legitimate repair fixes."""

from __future__ import annotations

from pathlib import Path

from libs.patch_guard.workspace_config import WorkspaceRepairConfig

FEATURES = '''"""Feature transformations of the churn model."""

from __future__ import annotations

import os as o


def monthly_spend(total: float, months: int) -> float:
    """Average spend per month of account life."""
    return total / months


def tenure_bucket(months: int) -> str:
    return "new" if months < 6 else "old"


def cache_dir() -> str:
    return o.path.join("cache", "features")
'''

TRAIN = '''"""Training of the churn model."""

from __future__ import annotations


def fit(rows: list[dict[str, float]]) -> dict[str, float]:
    total = sum(row["spend"] for row in rows)
    return {"mean_spend": total / len(rows)}
'''

INIT = '''"""The churn model package."""

import json

VERSION = "3.1"


def describe() -> str:
    return json.dumps({"model": "churn", "version": VERSION})
'''

TRANSFORMERS = '''"""Scikit-learn transformers of the churn pipeline."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin

PLAN_LEVEL = {"basic": 0, "plus": 1, "premium": 2}


class SpendRatio(BaseEstimator, TransformerMixin):
    """Spend per month of tenure, capped, and the plan as an ordinal level."""

    columns = ("spend", "tenure", "plan")

    def __init__(self, cap: float = 500.0) -> None:
        self.cap = cap

    def fit(self, frame: pd.DataFrame, y: pd.Series | None = None) -> SpendRatio:
        self.spend_median_ = float(frame["spend"].median())
        return self

    def transform(self, frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.loc[:, list(self.columns)]
        out = pd.DataFrame(index=frame.index)
        out["spend"] = frame["spend"]
        out["spend_per_month"] = np.minimum(frame["spend"] / frame["tenure"], self.cap)
        out["plan_level"] = frame["plan"].map(PLAN_LEVEL)
        return out
'''

PIPELINE = '''"""The churn model's preprocessing and estimator."""

from __future__ import annotations

from sklearn.compose import ColumnTransformer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

NUMERIC = ["spend", "tenure_months", "support_calls"]
REGULARISATION = 0.001


def build_pipeline(numeric: list[str] = NUMERIC, categorical: tuple[str, ...] = ("plan", "regions")) -> Pipeline:
    preprocess = ColumnTransformer(
        [
            ("numeric", StandardScaler(), numeric),
            ("categorical", OneHotEncoder(handle_unknown="error"), list(categorical)),
        ],
        remainder="drop",
    )
    model = LogisticRegression(C=REGULARISATION, max_iter=500)
    return Pipeline([("preprocess", preprocess), ("model", model)])


def score(pipeline: Pipeline, frame, labels) -> float:
    return float(f1_score(labels, pipeline.predict(frame)))
'''

FRAME_FEATURES = '''"""Vectorised features of the churn model, on a frame of accounts."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _number(frame: pd.DataFrame, column: str) -> pd.Series:
    return frame[column].astype(float)


def spend_features(frame: pd.DataFrame) -> pd.DataFrame:
    spend, months = _number(frame, "spend"), _number(frame, "months")
    out = pd.DataFrame(index=frame.index)
    out["spend_per_month"] = spend / months
    out["log_spend"] = np.log1p(spend.clip(lower=0))
    out["calls_per_month"] = _number(frame, "support_calls") / months
    return out
'''

ROWS = '''"""Per-account features, one record at a time, as the scoring service computes them."""

import math

PLAN_WEIGHT = {"basic": 0.5, "plus": 0.8, "premium": 1.0}
SPEND_KEY = "monthly_spend"


def spend_rate(row: dict[str, str]) -> float:
    spend = float(row[SPEND_KEY])
    months = int(row["months"])
    return spend / months


def plan_weight(row: dict[str, str]) -> float:
    return PLAN_WEIGHT[row["plan"]]


def log_calls(row: dict[str, str]) -> float:
    return math.log(float(row["support_calls"]) + 1.0)


def tenure_years(row: dict[str, str]) -> float:
    return round(int(row["months"]) / 12 * 1.5, 2)
'''

LOADER = '''"""Reading the training and scoring data."""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

import pandas as pd

log = logging.getLogger(__name__)
CACHE = Path(os.getenv("CHURN_CACHE", "cache"))


def load_accounts(path: str) -> pd.DataFrame:
    started = time.perf_counter()
    frame = pd.read_csv(path)
    log.info("read %d accounts in %.2fs", len(frame), time.perf_counter() - started)
    return frame


def load_notes(path: Path) -> str:
    with open(path) as handle:
        return handle.read()


def main() -> None:
    load_accounts(sys.argv[1])
'''

REPORT = '''"""A training run's summary, as a reviewer reads it."""

import string
import sys

FORMATTER = string.Formatter()


def summary_line(name: str, score: float) -> str:
    return FORMATTER.format("{0}: {1:.3f}", name, score)


def report(scores: dict[str, float]) -> None:
    for name, score in sorted(scores.items()):
        print(summary_line(name, score), file=sys.stderr)
'''

TRAIN_CONFIG = """model:
  kind: logistic_regression
  C: 0.001
  class_weight: balanced
features: [spend, months, plan]
"""

PARAMS_JSON = '{\n  "threshold": 0.9,\n  "max_iter": 500\n}\n'

MODEL_TOML = "[training]\nlearning_rate = 0.5\nepochs = 20\n"

EVALUATE = """import json

from pkg.features import monthly_spend

f1 = 0.72 if monthly_spend(120.0, 12) == 10.0 else 0.0
print(json.dumps({"metrics": {"f1": f1}}))
"""

GENERATED: dict[str, str] = {
    "pkg/schema_gen.py": '# Code generated by schemagen v2 from schema.avsc.\n\nFIELDS = ["spend", "months"]\n',
    "pkg/defaults.py": '# DO NOT EDIT: exported by the feature store.\n\nDEFAULT_PLAN = "basic"\n',
    "pkg/codes_autogen.py": '# This file is autogenerated from codes.csv.\n\nCODES = {"b": "basic"}\n',
    "pkg/regions.py": '"""Regions (auto-generated by tools/regions.py)."""\n\nREGIONS = ["north", "south"]\n',
    "pkg/buckets.py": "# @generated by bucketgen\n\nEDGES = [0, 6, 12, 24]\n",
    "pkg/lookup_table.py": 'WEIGHTS = {"basic": 0.5}\n',
    "pkg/vocab.py": 'VOCABULARY = ["basic", "plus"]\n',
    "pkg/events_pb2.py": 'DESCRIPTOR = "events.proto"\n',
}
"""Generated by a header marker, by ``.gitattributes`` (lookup_table), by a stamp file next to it (vocab),
by the central policy's ``generated_paths`` (events_pb2)."""

FILES: dict[str, str] = {
    "pkg/__init__.py": INIT,
    "pkg/features.py": FEATURES,
    "pkg/train.py": TRAIN,
    "pkg/labels.py": 'LABEL = "churned"\n',
    "pkg/columns.py": 'COLUMNS = ["spend", "months"]\n',
    "pkg/lookup.csv": "plan,weight\nbasic,0.5\n",
    "pkg/transformers.py": TRANSFORMERS,
    "pkg/pipeline.py": PIPELINE,
    "pkg/frame_features.py": FRAME_FEATURES,
    "pkg/rows.py": ROWS,
    "pkg/loader.py": LOADER,
    "pkg/report.py": REPORT,
    "pkg/train_config.yaml": TRAIN_CONFIG,
    "pkg/params.json": PARAMS_JSON,
    "pkg/model.toml": MODEL_TOML,
    **GENERATED,
    "pkg/vocab.stamp": "bucketgen 1.4\n",
    ".gitattributes": "*.csv text\npkg/lookup_table.py linguist-generated=true\n",
    "tools/clean.py": "def clean(value: str) -> str:\n    return value.strip()\n",
    "evaluate.py": EVALUATE,
    "tests/test_features.py": (
        "from pkg.features import monthly_spend\n\n\n"
        "def test_monthly_spend() -> None:\n    assert monthly_spend(120.0, 12) == 10.0\n"
    ),
    "setup.py": "from setuptools import setup\n\nsetup(name='churn-model')\n",
    "requirements.txt": "scikit-learn==1.5.0\n",
    ".github/workflows/ci.yml": "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n",
    "scripts/retrain.sh": "#!/bin/sh\npython -m pkg.train\n",
}
OUTSIDE_FILE = "outside/evil.py"
"""A file next to the workspace, where ``pkg/escape`` points."""

SYMLINKS: dict[str, str] = {
    "pkg/judge.py": "../tests/test_features.py",
    "pkg/escape": "../../outside",
}

REPAIR_PATHS = ("pkg/*.py", "pkg/*.yaml", "pkg/*.json", "pkg/*.toml")
LABEL = "churned"

CONFIG = WorkspaceRepairConfig(
    path_scopes=(REPAIR_PATHS,),
    evaluate=("python", "evaluate.py", "--data", "{data}"),
    tests=("python", "-m", "pytest", "-q", "--junitxml", "{junit}", "tests"),
    labels=(LABEL,),
)
"""The workspace's config, as a bundle.yaml would give it."""

BUNDLE_YAML = """workspace:
  evaluate: [python, evaluate.py, --data, "{data}"]
  tests: [python, -m, pytest, -q, --junitxml, "{junit}", tests]
  repair_paths: ["pkg/*.py", "pkg/*.yaml", "pkg/*.json", "pkg/*.toml"]
  label: churned
"""


def build_workspace(folder: Path) -> Path:
    """Write the workspace to ``folder/workspace`` (and the file its escaping link points at); return it."""
    workspace = folder / "workspace"
    for relpath, text in FILES.items():
        target = workspace / relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    outside = folder / OUTSIDE_FILE
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text("SECRET = 1\n", encoding="utf-8")
    for relpath, target in SYMLINKS.items():
        (workspace / relpath).symlink_to(target)
    return workspace
