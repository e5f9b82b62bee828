"""The model workspace the patch corpus is written against: a small churn-model repository with its tests,
evaluation entry point, build files, CI configuration, and two symbolic links a patch could hide behind."""

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

FILES: dict[str, str] = {
    "pkg/__init__.py": "",
    "pkg/features.py": FEATURES,
    "pkg/train.py": TRAIN,
    "pkg/labels.py": 'LABEL = "churned"\n',
    "pkg/columns.py": 'COLUMNS = ["spend", "months"]\n',
    "pkg/lookup.csv": "plan,weight\nbasic,0.5\n",
    "tools/clean.py": "def clean(value: str) -> str:\n    return value.strip()\n",
    "evaluate.py": 'import json\n\nprint(json.dumps({"metrics": {"f1": 0.72}}))\n',
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

CONFIG = WorkspaceRepairConfig(
    path_scopes=(("pkg/*.py",),),
    evaluate=("python", "evaluate.py", "--data", "{data}"),
    tests=("python", "-m", "pytest", "-q", "--junitxml", "{junit}", "tests"),
)
"""The workspace's config, as a bundle.yaml would give it."""

BUNDLE_YAML = """workspace:
  evaluate: [python, evaluate.py, --data, "{data}"]
  tests: [python, -m, pytest, -q, --junitxml, "{junit}", tests]
  repair_paths: ["pkg/*.py"]
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
