"""Single validation checks: compile in the sandbox, the tests that import a changed module, the gate, the
integrity of the copy, and the copy itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from libs.policy.model_policy import GatePolicy
from libs.sandbox.copy import UnsafeWorkspace
from libs.sandbox.isolation import Isolation
from services.validator.checks import (
    CheckResult,
    _compile_errors,
    check_compiles,
    check_gate,
    check_integrity,
    check_invalid_values,
    check_source_unchanged,
    check_tests,
    within_tolerance,
)
from services.validator.sandbox import apply_patch, sandbox_copy
from services.validator.targeting import (
    imported_modules,
    importing_tests,
    module_name,
    named_test_folders,
    targeted_command,
)
from tests.support.typed_policy import workspace_policy
from tests.support.waiting import wait_until

SPEC = workspace_policy(timeout_s=30)
PYTEST = ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "{junit}", "tests"]


def test_compile_check_compiles_the_changed_files_in_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text("X = 1\n")
    (tmp_path / "bad.py").write_text("def broken(:\n")
    assert check_compiles(tmp_path, ["good.py", "notes.md", "gone.py"], SPEC).values == {
        "files": ["good.py"],
        "errors": [],
    }
    result = check_compiles(tmp_path, ["good.py", "bad.py"], SPEC)
    assert not result.passed and result.values["errors"][0].startswith("bad.py:")
    assert not list(tmp_path.rglob("*.pyc")) and not list(tmp_path.rglob("__pycache__"))


def test_compile_check_passes_when_no_python_file_changed(tmp_path: Path) -> None:
    result = check_compiles(tmp_path, ["README.md"], SPEC)
    assert result.passed and result.detail == "no Python file changed"


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


def test_integrity_reports_what_the_commands_changed_and_the_isolation_in_force() -> None:
    unavailable = Isolation("none", None, "bwrap not installed; unshare not installed")
    after_patch = {"a.py": "1", "b.py": "2"}
    clean = check_integrity(after_patch, dict(after_patch), unavailable)
    assert clean.passed
    assert clean.values["sandbox"]["network_isolation"] == "unavailable (bwrap not installed; unshare not installed)"
    dirty = check_integrity(after_patch, {"a.py": "1", "b.py": "3", "model.pkl": "4"}, unavailable)
    assert not dirty.passed
    assert (dirty.values["created"], dirty.values["modified"], dirty.values["deleted"]) == (["model.pkl"], ["b.py"], [])


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


def test_the_gate_reads_the_re_run_evaluation() -> None:
    evaluation = CheckResult(name="evaluation", status="passed", detail="", values={"metrics": {"f1": 0.79}})
    gate = GatePolicy(metric="f1", direction="higher_is_better", tolerance=0.02)
    assert check_gate(evaluation, gate, {"f1": 0.80}).values["delta"] == -0.01
    assert not check_gate(evaluation, gate, {"f1": 0.85}).passed
    missing = check_gate(evaluation, gate.model_copy(update={"metric": "auc"}), {"auc": 0.9})
    assert not missing.passed and "no 'auc'" in missing.detail


def test_a_code_repair_may_match_the_approved_code_on_the_same_rows() -> None:
    """Today's rows score lower for everyone: the repair is judged against the base code on those rows too."""
    evaluation = CheckResult(name="evaluation", status="passed", detail="", values={"metrics": {"rmse": 3.1}})
    gate = GatePolicy(metric="rmse", direction="lower_is_better", tolerance=0.1)
    assert not check_gate(evaluation, gate, {"rmse": 2.7}).passed
    same_rows = check_gate(evaluation, gate, {"rmse": 2.7}, same_window_reference=3.05)
    assert same_rows.passed and same_rows.values["within_tolerance_of"] == "base_on_same_window"
    assert not check_gate(evaluation, gate, {"rmse": 2.7}, same_window_reference=2.9).passed


def test_module_names_follow_the_file_layout() -> None:
    assert module_name("churn_model/features.py") == "churn_model.features"
    assert module_name("churn_model/__init__.py") == "churn_model"
    assert module_name("src/pkg/mod.py") == "pkg.mod"
    assert module_name("README.md") is None


def test_imports_are_read_from_the_syntax_tree() -> None:
    source = b"import a.b as c\nfrom d import e, f\nfrom . import local\nfrom g import *\n"
    assert imported_modules(source) == {"a.b", "d", "d.e", "d.f", "g"}


def test_the_tests_importing_a_changed_module_are_found(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    (tests / "deep").mkdir(parents=True)
    (tests / "test_direct.py").write_text("from churn_model.features import spend\n")
    (tests / "deep" / "test_package.py").write_text("from churn_model import features\n")
    (tests / "test_other.py").write_text("import churn_model.train\n")
    (tests / "helpers.py").write_text("import churn_model.features\n")
    (tests / "test_broken.py").write_text("def broken(:\n")
    folders = named_test_folders(tmp_path, PYTEST)
    assert folders == ["tests"]
    found, unparsable = importing_tests(tmp_path, folders, ["churn_model.features"])
    assert found == ["tests/deep/test_package.py", "tests/test_direct.py"]
    assert unparsable == ["tests/test_broken.py"]
    assert targeted_command(PYTEST, folders, found)[-2:] == found
    assert "tests" not in targeted_command(PYTEST, folders, found)


def test_a_tests_argument_too_long_for_a_file_name_is_no_test_folder(tmp_path: Path) -> None:
    """A ``-k`` expression (or any argument) longer than the file system's name limit names no folder of the
    workspace: the tests command's folders are still found, rather than OSError out of the check."""
    (tmp_path / "tests").mkdir()
    expression = " or ".join(f"test_case_{index}" for index in range(40))
    assert len(expression) > 255
    assert named_test_folders(tmp_path, ["pytest", "-k", expression, "tests"]) == ["tests"]
    assert named_test_folders(tmp_path, ["pytest", "-k", expression]) == ["tests"]


def test_the_copy_leaves_out_vcs_data_environments_and_caches(tmp_path: Path) -> None:
    source = tmp_path / "source"
    for relpath in ("a.py", "pkg/b.py", ".git/HEAD", ".venv/bin/python", "pkg/__pycache__/b.pyc", "c.pyc"):
        (source / relpath).parent.mkdir(parents=True, exist_ok=True)
        (source / relpath).write_text("x")
    with sandbox_copy(source) as workspace:
        copied = sorted(path.relative_to(workspace).as_posix() for path in workspace.rglob("*") if path.is_file())
        assert copied == ["a.py", "pkg/b.py"]


def test_a_link_out_of_the_workspace_refuses_the_copy(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    os.symlink("/etc/passwd", source / "passwd")
    with pytest.raises(UnsafeWorkspace, match="points out"), sandbox_copy(source):
        pass


def test_sandbox_is_a_copy_and_disappears(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    with sandbox_copy(tmp_path) as workspace:
        applied = apply_patch(workspace, "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")
        assert applied.applied and applied.numstat == ((1, 1, "a.py"),)
        assert (workspace / "a.py").read_text() == "x = 2\n"
    assert wait_until(lambda: not workspace.exists(), 30)  # removed on the removal thread
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_a_patch_that_does_not_apply_whole_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 1\n")
    both = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-y = 9\n+y = 2\n"
    with sandbox_copy(tmp_path) as workspace:
        refused = apply_patch(workspace, both)
        assert not refused.applied and "b.py" in refused.detail and refused.numstat == ()
        assert (workspace / "a.py").read_text() == "x = 1\n"  # its hunk applies, but the patch does not


def test_patches_may_not_leave_the_sandbox(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    with sandbox_copy(tmp_path) as workspace:
        escaped = apply_patch(workspace, "--- /dev/null\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x = 1\n")
        assert not escaped.applied
        assert not (workspace.parent / "evil.py").exists()


def test_the_data_check_allows_what_the_approved_code_gives_on_the_same_rows(tmp_path: Path) -> None:
    """Features with a NaN by design (imputed later) are no new invalid values when the approved code has them."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "features.py").write_text(
        "import sys\n"
        "out = sys.argv[sys.argv.index('--output') + 1]\n"
        "open(out, 'w').write('a,b\\n1.0,nan\\n2.0,3.0\\n')\n"
    )
    data = tmp_path / "rows.csv"
    data.write_text("x\n1\n2\n")
    features = ["python", "features.py", "--data", "{data}", "--output", "{output}"]
    spec = workspace_policy(features=features, timeout_s=60)
    same = check_invalid_values(workspace, data, spec, tmp_path / "s1", approved_invalid_total=1)
    assert same.passed and same.values["total"] == 1 and same.values["approved_code_total"] == 1
    more = check_invalid_values(workspace, data, spec, tmp_path / "s2", approved_invalid_total=0)
    assert not more.passed and more.values["new"] == {"b": 1}
    assert not check_invalid_values(workspace, data, spec, tmp_path / "s3").passed  # nothing tolerated


FAILING_TEST_WITH_A_FORGED_REPORT = {
    "tests/test_model.py": "def test_scores():\n    assert False\n",
    "tests/conftest.py": (
        "import atexit, sys\n\n"
        "def _claim_success():\n"
        "    with open(sys.argv[sys.argv.index('--junitxml') + 1], 'w') as out:\n"
        '        out.write(\'<testsuite tests="1" failures="0" errors="0" skipped="0" time="0.1"/>\')\n\n'
        "def pytest_unconfigure(config):\n"
        "    atexit.register(_claim_success)\n"
    ),
}


def test_the_tests_check_fails_when_the_report_says_passed_and_pytest_says_failed(tmp_path: Path) -> None:
    for name, text in FAILING_TEST_WITH_A_FORGED_REPORT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")

    result = check_tests(tmp_path, workspace_policy(timeout_s=60, tests=PYTEST))

    assert (result.values["passed"], result.values["failed"], result.values["exit_status"]) == (1, 0, 1)
    assert not result.passed
    assert result.detail == "1 passed, 0 failed, 0 errors, but the tests command exited with status 1"


@pytest.mark.parametrize(
    "printed",
    ["5", '{"a": 1}', "[" * 100_000 + "]" * 100_000, "[[1, 2]]", "null"],
    ids=["a-number", "a-mapping", "nested-past-the-parser", "a-list-of-lists", "null"],
)
def test_a_compiler_report_that_is_not_a_list_of_messages_is_unreadable(printed: str) -> None:
    """Anything but a list of messages on the compile program's last line is the compiler not having run (a
    ValueError the check reports), not a TypeError or a RecursionError out of the validator."""
    with pytest.raises(ValueError, match="compile program's report"):
        _compile_errors(f"compiling\n{printed}\n")


@pytest.mark.parametrize(
    "printed",
    ["5", "[" * 100_000 + "]" * 100_000, "[]"],
    ids=["a-number", "nested-past-the-parser", "nothing-failed"],
)
def test_the_compile_program_does_not_import_the_workspaces_json(tmp_path: Path, printed: str) -> None:
    """The compile program runs in the workspace's folder, isolated (``-I``): a json.py of the pull request is not
    the json it imports, whatever it prints."""
    (tmp_path / "json.py").write_text(f"def dumps(errors):\n    return {printed!r}\n")
    (tmp_path / "model.py").write_text("X = 1\n")
    result = check_compiles(tmp_path, ["model.py"], SPEC)
    assert result.passed and result.detail == "1 changed Python file(s) compiled"


def test_a_json_module_of_the_workspace_cannot_speak_for_the_compiler(tmp_path: Path) -> None:
    """The compile program runs in the workspace's folder; a pull request's own json.py, which says every file
    compiled, must not be the one it imports."""
    (tmp_path / "json.py").write_text("def dumps(errors):\n    return '[]'\n", encoding="utf-8")
    (tmp_path / "model.py").write_text("def predict(:\n", encoding="utf-8")

    result = check_compiles(tmp_path, ["model.py"], SPEC)

    assert not result.passed
    assert result.values["errors"][0].startswith("model.py:")
