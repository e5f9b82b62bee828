"""The feature path: the module the features command runs and the workspace modules it imports."""

from __future__ import annotations

from pathlib import Path

from services.diagnoser.feature_path import command_entry_file, feature_source_files

SPEC = {"features": ["python", "-m", "pkg.features", "--data", "{data}", "--output", "{output}"]}


def write(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_follows_absolute_and_relative_imports_within_the_workspace(tmp_path: Path) -> None:
    tree = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/features.py": "import numpy\nfrom pkg.data import load\nfrom . import helpers\n",
            "pkg/data.py": "from .columns import NAMES\n",
            "pkg/columns.py": "NAMES = ()\n",
            "pkg/helpers.py": "",
            "pkg/train.py": "from pkg.features import build\n",
            "evaluate.py": "import pkg.train\n",
        },
    )
    assert feature_source_files(tree, SPEC) == {
        "pkg/__init__.py",
        "pkg/features.py",
        "pkg/data.py",
        "pkg/columns.py",
        "pkg/helpers.py",
    }


def test_script_commands_and_missing_modules(tmp_path: Path) -> None:
    tree = write(tmp_path, {"build.py": ""})
    assert command_entry_file(tree, ["python", "build.py", "--data", "{data}"]) == "build.py"
    assert feature_source_files(tree, SPEC) == frozenset()
    assert feature_source_files(tree, {}) == frozenset()
