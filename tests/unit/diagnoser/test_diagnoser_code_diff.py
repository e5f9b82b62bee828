"""code_diff: which files and functions changed between two trees, compared by AST, not by text."""

from __future__ import annotations

from pathlib import Path

from services.diagnoser.code_diff import diff_trees

BASE_FEATURES = '''"""Features."""

RATE = 1.0


def monthly(total: float, months: int) -> float:
    """Spend per month."""
    if months <= 0:
        return 0.0
    return total / months


def untouched(value: float) -> float:
    return value * 2


def dropped() -> int:
    return 1


class Scaler:
    def scale(self, value: float) -> float:
        return value * RATE
'''

CANDIDATE_FEATURES = '''"""Features."""

RATE = 1.0


def monthly(
    total: float,
    months: int,
) -> float:
    """Spend per month."""
    return total / months


def untouched(value: float) -> float:
    # only a comment and the layout differ
    return (
        value * 2
    )


def added(value: float) -> float:
    return value


class Scaler:
    def scale(self, value: float) -> float:
        return value * RATE * 1.0
'''


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for relpath, text in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def make_pair(tmp_path: Path) -> tuple[Path, Path]:
    base = write_tree(tmp_path / "base", {"pkg/features.py": BASE_FEATURES, "README.md": "v1\n", "same.py": "X = 1\n"})
    candidate = write_tree(
        tmp_path / "candidate",
        {"pkg/features.py": CANDIDATE_FEATURES, "README.md": "v2\n", "same.py": "X = 1\n", "new.py": "Y = 2\n"},
    )
    (candidate / "pkg" / "__pycache__").mkdir()
    (candidate / "pkg" / "__pycache__" / "features.cpython-311.pyc").write_bytes(b"\0")
    return base, candidate


def test_lists_changed_files_with_status_and_line_counts(tmp_path: Path) -> None:
    diff = diff_trees(*make_pair(tmp_path))
    by_path = {changed.path: changed for changed in diff.changed_files}
    assert sorted(by_path) == ["README.md", "new.py", "pkg/features.py"]
    assert by_path["new.py"].status == "added"
    assert by_path["README.md"].is_python is False
    assert by_path["pkg/features.py"].status == "modified"
    assert by_path["pkg/features.py"].removed_lines > 0


def test_functions_are_compared_by_ast_so_layout_changes_do_not_count(tmp_path: Path) -> None:
    diff = diff_trees(*make_pair(tmp_path))
    changes = {change.qualified_name: change.status for change in diff.function_changes}
    assert changes == {"monthly": "modified", "added": "added", "dropped": "removed", "Scaler.scale": "modified"}


def test_function_change_carries_file_line_ranges_and_parameters(tmp_path: Path) -> None:
    diff = diff_trees(*make_pair(tmp_path))
    monthly = next(change for change in diff.function_changes if change.qualified_name == "monthly")
    assert monthly.file == "pkg/features.py"
    assert monthly.base_lines == (6, 10)
    assert monthly.candidate_lines == (6, 11)
    assert monthly.parameters == ("total", "months")


def test_unified_diff_uses_a_and_b_paths(tmp_path: Path) -> None:
    diff = diff_trees(*make_pair(tmp_path))
    assert "--- a/pkg/features.py\n+++ b/pkg/features.py\n" in diff.unified_diff
    assert "--- /dev/null\n+++ b/new.py\n" in diff.unified_diff
    assert "-    if months <= 0:\n" in diff.unified_diff


def test_module_level_change_is_flagged_separately_from_functions(tmp_path: Path) -> None:
    base = write_tree(tmp_path / "b", {"train.py": "C = 1.0\n\n\ndef fit():\n    return C\n"})
    candidate = write_tree(tmp_path / "c", {"train.py": "C = 0.01\n\n\ndef fit():\n    return C\n"})
    diff = diff_trees(base, candidate)
    assert diff.function_changes == ()
    assert diff.changed_files[0].module_level_changed is True


def test_identical_trees_have_no_changes(tmp_path: Path) -> None:
    base = write_tree(tmp_path / "b", {"a.py": "X = 1\n"})
    candidate = write_tree(tmp_path / "c", {"a.py": "X = 1\n"})
    diff = diff_trees(base, candidate)
    assert diff.changed_files == () and diff.unified_diff == ""


def test_a_file_saved_with_a_byte_order_mark_is_compared_function_by_function(tmp_path: Path) -> None:
    """Python runs a file that starts with a UTF-8 byte order mark; its functions are compared like any file's,
    not all taken as removed (the candidate "did not parse")."""
    base = tmp_path / "b"
    candidate = tmp_path / "c"
    (base / "pkg").mkdir(parents=True)
    (candidate / "pkg").mkdir(parents=True)
    (base / "pkg" / "features.py").write_bytes(BASE_FEATURES.encode("utf-8"))
    (candidate / "pkg" / "features.py").write_bytes(CANDIDATE_FEATURES.encode("utf-8-sig"))
    changes = {change.qualified_name: change.status for change in diff_trees(base, candidate).function_changes}
    assert changes == {"monthly": "modified", "added": "added", "dropped": "removed", "Scaler.scale": "modified"}
