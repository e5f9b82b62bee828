"""The files a python command runs: its entry module or script and the workspace modules it imports."""

from __future__ import annotations

from pathlib import Path

from services.diagnoser.feature_modules import feature_files
from services.diagnoser.import_closure import command_entry_file, command_files
from services.diagnoser.inputs import WorkspaceConfig

FEATURES = ("python", "-m", "pkg.features", "--data", "{data}", "--output", "{output}")


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
    assert command_files(tree, FEATURES) == {
        "pkg/__init__.py",
        "pkg/features.py",
        "pkg/data.py",
        "pkg/columns.py",
        "pkg/helpers.py",
    }


def test_script_commands_and_missing_modules(tmp_path: Path) -> None:
    tree = write(tmp_path, {"build.py": ""})
    assert command_entry_file(tree, ["python", "build.py", "--data", "{data}"]) == "build.py"
    assert command_entry_file(tree, ["python", "{script}.py"]) is None
    assert command_files(tree, FEATURES) == frozenset()
    assert command_files(tree, ()) == frozenset()


def test_feature_files_are_the_declared_modules_and_what_the_features_command_runs(tmp_path: Path) -> None:
    tree = write(tmp_path, {"pkg/__init__.py": "", "pkg/features.py": "from pkg import calc\n", "pkg/calc.py": ""})
    declared_only = WorkspaceConfig(evaluate=("python", "evaluate.py"), label="y", feature_modules=("pkg/calc*.py",))
    assert feature_files(tree, declared_only, ["pkg/calc.py", "pkg/train.py"]) == {"pkg/calc.py"}
    with_command = WorkspaceConfig(evaluate=("python", "evaluate.py"), label="y", features=FEATURES)
    assert feature_files(tree, with_command, ["pkg/train.py"]) == {"pkg/__init__.py", "pkg/features.py", "pkg/calc.py"}


def test_a_name_too_long_for_a_file_names_no_workspace_file(tmp_path: Path) -> None:
    """An import or a command argument longer than the file system's name limit (255 bytes) is no file of the
    tree: the closure goes on without it, and says nothing about it, rather than raising OSError."""
    long_name = "m" * 300
    tree = write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/features.py": f"import {long_name}\nfrom {long_name}.sub import thing\nfrom pkg import calc\n",
            "pkg/calc.py": "",
        },
    )
    assert command_files(tree, FEATURES) == {"pkg/__init__.py", "pkg/features.py", "pkg/calc.py"}
    assert command_entry_file(tree, ["python", "-m", long_name]) is None
    assert command_entry_file(tree, ["python", f"{long_name}.py"]) is None
