"""Single validation checks that need no workspace command."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.validator.checks import check_compiles, check_source_unchanged, within_tolerance
from services.validator.sandbox import apply_patch, sandbox_copy


def test_compile_check_reports_syntax_errors(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("X = 1\n")
    assert check_compiles(tmp_path).passed
    (tmp_path / "bad.py").write_text("def broken(:\n")
    result = check_compiles(tmp_path)
    assert not result.passed and "bad.py" in result.values["errors"][0]
    assert not list(tmp_path.rglob("*.pyc"))


def test_source_unchanged_names_every_difference() -> None:
    before = {"a.py": "1", "b.py": "2"}
    assert check_source_unchanged(before, dict(before)).passed
    result = check_source_unchanged(before, {"a.py": "9", "c.py": "3"})
    assert not result.passed
    assert (result.values["changed"], result.values["added"], result.values["removed"]) == (
        ["a.py"],
        ["c.py"],
        ["b.py"],
    )
    assert result.values["digest_before"] != result.values["digest_after"]


@pytest.mark.parametrize(
    ("direction", "value", "expected"),
    [
        ("higher_is_better", 0.79, True),
        ("higher_is_better", 0.77, False),
        ("lower_is_better", 0.81, True),
        ("lower_is_better", 0.83, False),
    ],
)
def test_tolerance_follows_the_metric_direction(direction: str, value: float, expected: bool) -> None:
    assert within_tolerance(direction, 0.80, value, 0.02) is expected


def test_sandbox_is_a_copy_and_disappears(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    with sandbox_copy(tmp_path) as workspace:
        applied = apply_patch(workspace, "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
        assert applied.applied and applied.numstat == ((1, 1, "a.py"),)
        assert (workspace / "a.py").read_text() == "x = 2\n"
    assert not workspace.exists()
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_patches_may_not_leave_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    with sandbox_copy(tmp_path) as workspace:
        escaped = apply_patch(workspace, "--- /dev/null\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x = 1\n")
        assert not escaped.applied
        assert not (workspace.parent / "evil.py").exists()
