"""A small, real model repository for the diagnosis's tests: a churn classifier (a numpy logistic
regression on a monthly-spend ratio, visits and a plan) with a ``predict`` entry point, a ``features`` command
and a training parameter, plus seeded data windows whose label depends on the inputs. Every metric the tests
see is computed by running it; variants of the candidate and of the incident data inject one cause each."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.inputs import DataWindow, GateSpec, IncidentInputs, WorkspaceConfig
from services.diagnoser.trials.parallelism import trial_runner

PREDICT = '''"""python predict.py --train TRAIN --features ROWS --output PREDICTIONS"""
import argparse

import numpy as np
import pandas as pd

from toy.features import feature_frame
from toy.train import C


def logistic_regression(x, y, c, steps=400, rate=0.5):
    """L2-penalised logistic regression (penalty 1/c, as scikit-learn's C) on standardised inputs."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / scale
    weights, bias = np.zeros(z.shape[1]), 0.0
    for _ in range(steps):
        error = 1.0 / (1.0 + np.exp(-(z @ weights + bias))) - y
        weights = (weights - rate * z.T @ error / len(y)) / (1.0 + rate / (c * len(y)))  # the penalty's proximal step
        bias -= rate * error.mean()
    return lambda rows: 1.0 / (1.0 + np.exp(-(((rows - mean) / scale) @ weights + bias)))


parser = argparse.ArgumentParser()
parser.add_argument("--train")
parser.add_argument("--features")
parser.add_argument("--output")
args = parser.parse_args()
train = pd.read_csv(args.train)
rows = pd.read_csv(args.features)
x_train = np.nan_to_num(feature_frame(train).to_numpy(dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
x_rows = np.nan_to_num(feature_frame(rows).to_numpy(dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
scores = logistic_regression(x_train, train["churned"].to_numpy(dtype=float), C)(x_rows)
pd.DataFrame({"row_id": rows["row_id"], "prediction": scores}).to_csv(args.output, index=False)
'''
FEATURES = '''"""The model's inputs from raw customer rows; ``python -m toy.features --data CSV --output CSV``."""
import argparse

import pandas as pd

from toy.calc import per_month

PLANS = ("basic", "plus", "pro")


def feature_frame(rows: pd.DataFrame) -> pd.DataFrame:
    total = pd.to_numeric(rows.get("total", 0.0), errors="coerce")
    months = pd.to_numeric(rows.get("months", 1), errors="coerce")
    visits = pd.to_numeric(rows["visits"], errors="coerce") if "visits" in rows else pd.Series(0.0, index=rows.index)
    plan = rows["plan"] if "plan" in rows else pd.Series("basic", index=rows.index)
    plan = plan.where(plan.isin(PLANS), "basic")
    frame = pd.DataFrame({"per_month": [per_month(t, m) for t, m in zip(total, months)], "visits": visits.fillna(-9)})
    for name in PLANS:
        frame[f"plan_{name}"] = (plan == name).astype(float)
    return frame


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data")
    parser.add_argument("--output")
    args = parser.parse_args()
    feature_frame(pd.read_csv(args.data)).to_csv(args.output, index=False)
'''
GUARDED = '''def per_month(total, months):
    """Spend per month of tenure; a brand-new account has spent its first month."""
    if months <= 0:
        return total / 10.0
    return total / months / 10.0
'''
UNGUARDED = '''import numpy as np


def per_month(total, months):
    """Spend per month of tenure."""
    return float(np.float64(total) / months / 10.0)
'''
DOCUMENTED = GUARDED.replace("has spent its first month.", "has spent its first month (see docs/spend.md).")
TRAIN = "C = 1.0\n"
PYPROJECT = '[project]\nname = "toy"\nversion = "{version}"\n'

CONFIG = WorkspaceConfig(
    predict=("python", "predict.py", "--train", "{train}", "--features", "{features}", "--output", "{predictions}"),
    label="churned",
    feature_modules=("toy/calc.py", "toy/features.py"),
    features=("python", "-m", "toy.features", "--data", "{data}", "--output", "{output}"),
    timeout_s=120,
)
NO_FEATURES_COMMAND = CONFIG.model_copy(update={"features": None})
GATE = GateSpec(metric="f1", direction="higher_is_better", tolerance=0.03)


def write_tree(root: Path, calc: str = GUARDED, train: str = TRAIN, version: str = "1.0.0") -> Path:
    for relpath, text in {
        "toy/__init__.py": "",
        "toy/calc.py": calc,
        "toy/features.py": FEATURES,
        "toy/train.py": train,
        "predict.py": PREDICT,
        "pyproject.toml": PYPROJECT.format(version=version),
    }.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def customers(
    seed: int, n: int = 1200, *, positive_rate: float | None = None, heavy_users: float = 0.0
) -> pd.DataFrame:
    """Customers whose churn follows spend per month, visits and plan; ``positive_rate`` resamples the rows to
    that share of churners (a prior shift: P(inputs | label) unchanged); ``heavy_users`` is the share of a new
    segment with 20-40 visits, beyond anything the approval window saw (a covariate shift: P(label | inputs)
    unchanged)."""
    rng = np.random.default_rng(seed)
    size = n * 4 if positive_rate is not None else n
    months = np.where(rng.random(size) < 0.2, 0, rng.integers(1, 25, size))
    total = rng.gamma(2.0, 60.0, size).round(2)
    visits = np.where(rng.random(size) < heavy_users, rng.integers(20, 41, size), rng.integers(0, 10, size))
    plan = rng.choice(["basic", "plus", "pro"], size, p=[0.4, 0.3, 0.3])
    spend = np.where(months > 0, total / np.maximum(months, 1), total) / 10.0
    # heavy users churn again (they outgrow the product): a turn the approval window's 0-9 visits never show
    logit = 1.6 * spend - 0.9 * np.minimum(visits, 9) + 0.5 * np.maximum(visits - 12, 0) + 2.5 * (plan == "pro") - 1.6
    churned = (rng.random(size) < 1 / (1 + np.exp(-logit))).astype(int)
    frame = pd.DataFrame({"total": total, "months": months, "visits": visits, "plan": plan, "churned": churned})
    if positive_rate is None:
        return frame
    positives, negatives = frame[frame.churned == 1], frame[frame.churned == 0]
    k = round(n * positive_rate)
    chosen = pd.concat([positives.sample(k, random_state=seed), negatives.sample(n - k, random_state=seed)])
    return chosen.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def as_text_amounts(frame: pd.DataFrame, column: str = "total") -> pd.DataFrame:
    """The column's numbers formatted as an upstream export might: ``$1,234.50``."""
    out = frame.copy()
    out[column] = [f"${value:,.2f}" for value in frame[column]]
    return out


def with_nulls(frame: pd.DataFrame, column: str, share: float, seed: int = 5) -> pd.DataFrame:
    out = frame.copy().astype({column: object})
    rows = np.random.default_rng(seed).random(len(out)) < share
    out.loc[rows, column] = None
    return out


def write_window(root: Path, name: str, train: pd.DataFrame, scored: pd.DataFrame) -> DataWindow:
    root.mkdir(parents=True)
    train.to_csv(root / "train.csv", index=False)
    scored.to_csv(root / "eval.csv", index=False)
    return DataWindow(name=name, train=root / "train.csv", eval=root / "eval.csv")  # type: ignore[arg-type]


def toy_inputs(
    root: Path,
    *,
    candidate: dict[str, str] | None = None,
    incident: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    workspace: WorkspaceConfig = CONFIG,
) -> IncidentInputs:
    """``candidate``: keyword arguments of ``write_tree`` for the candidate revision (default: as the base);
    ``incident``: the incident window's (train, eval) rows (default: a fresh sample like the approval window)."""
    train, scored = incident if incident is not None else (customers(21), customers(22))
    return IncidentInputs(
        base_dir=write_tree(root / "base"),
        candidate_dir=write_tree(root / "candidate", **(candidate or {})),
        approval=write_window(root / "approval", "approval", customers(11), customers(12)),
        incident=write_window(root / "incident", "incident", train, scored),
        workspace=workspace,
        gate=GATE,
        trials=trial_runner(workspace, GATE, central_diagnosis_policy()),
    )
