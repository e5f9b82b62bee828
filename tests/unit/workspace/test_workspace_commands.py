from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from libs.workspace.commands import (
    WorkspaceCommandFailed,
    build_features,
    evaluate,
    parse_evaluation_output,
    run_tests,
)
from libs.workspace.data_windows import DataWindow
from libs.workspace.snapshot import tree_digests

SPEC = {
    "timeout_s": 60,
    "evaluate": ["python", "evaluate.py", "--train", "{train}", "--eval", "{eval}"],
    "features": ["python", "features.py", "--data", "{data}", "--output", "{output}"],
    "tests": ["python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "{junit}", "tests"],
}

EVALUATE_OK = """\
import argparse, json
parser = argparse.ArgumentParser()
parser.add_argument("--train")
parser.add_argument("--eval")
args = parser.parse_args()
rows = sum(1 for _ in open(args.eval)) - 1
print("training...")
print(json.dumps({"metrics": {"f1": 0.5, "roc_auc": 0.75}, "rows": {"train": rows - 1, "test": 1}}))
"""

FEATURES_OK = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--data")
parser.add_argument("--output")
args = parser.parse_args()
open(args.output, "w").write("a,b\\n1,inf\\n")
"""

TESTS = """\
import pytest

def test_passes():
    assert True

def test_fails():
    assert False

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
"""


def workspace(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text("[tool.pytest.ini_options]\ntestpaths = ['tests']\n")
    return root


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data" / "customers.csv"
    path.parent.mkdir()
    path.write_text("id\n1\n2\n3\n")
    return path


@pytest.fixture
def window(data: Path) -> DataWindow:
    return DataWindow(name="incident", train=data, eval=data)


def test_evaluate_reads_the_metrics_json(tmp_path: Path, window: DataWindow) -> None:
    root = workspace(tmp_path / "ws", {"evaluate.py": EVALUATE_OK})
    result = evaluate(root, window, SPEC)
    assert result.metrics == {"f1": 0.5, "roc_auc": 0.75}
    assert result.rows == {"train": 2, "test": 1}
    assert result.command.argv[-1] == str(window.eval.resolve())


def test_evaluate_failure_carries_the_stderr_tail(tmp_path: Path, window: DataWindow) -> None:
    root = workspace(tmp_path / "ws", {"evaluate.py": "raise SystemExit('model exploded')\n"})
    with pytest.raises(WorkspaceCommandFailed, match="model exploded") as raised:
        evaluate(root, window, SPEC)
    assert raised.value.result is not None and raised.value.result.returncode == 1


@pytest.mark.parametrize(
    "stdout",
    [
        "",
        "not json",
        '{"metrics": {}, "rows": {}}',
        "[1, 2]",
        '{"metrics": {"f1": 0.5}, "rows": 3}',
        '{"metrics": {"f1": NaN}, "rows": {}}',
        '{"metrics": {"f1": Infinity}, "rows": {}}',
        '{"metrics": {"f1": "high"}, "rows": {}}',
        "[" * 50_000 + "]" * 50_000,  # past the JSON parser's depth: RecursionError, unless refused as unreadable
    ],
)
def test_unreadable_evaluation_output_is_refused(stdout: str) -> None:
    with pytest.raises(ValueError):
        parse_evaluation_output(stdout)


def test_evaluate_refuses_a_non_finite_metric(tmp_path: Path, window: DataWindow) -> None:
    script = 'print(\'{"metrics": {"f1": NaN}, "rows": {"test": 1}}\')\n'
    root = workspace(tmp_path / "ws", {"evaluate.py": script})
    with pytest.raises(WorkspaceCommandFailed, match="unreadable output"):
        evaluate(root, window, SPEC)


def test_build_features_writes_outside_the_workspace(tmp_path: Path, data: Path) -> None:
    root = workspace(tmp_path / "ws", {"features.py": FEATURES_OK})
    before = tree_digests(root)
    out = build_features(root, data, tmp_path / "out" / "features.csv", SPEC)
    assert out.read_text() == "a,b\n1,inf\n"
    assert tree_digests(root) == before


def test_build_features_that_write_nothing_fail(tmp_path: Path, data: Path) -> None:
    root = workspace(tmp_path / "ws", {"features.py": "pass\n"})
    with pytest.raises(WorkspaceCommandFailed, match="was not written"):
        build_features(root, data, tmp_path / "features.csv", SPEC)


def test_run_tests_counts_from_the_junit_report(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"tests/test_sample.py": TESTS})
    before = tree_digests(root)
    run = run_tests(root, SPEC)
    assert (run.passed, run.failed, run.errors, run.skipped) == (1, 1, 0, 1)
    assert run.total == 3 and not run.succeeded
    assert run.duration_s >= 0
    assert tree_digests(root) == before, "the test run leaves no cache or byte-code behind"


def test_run_tests_counts_collection_errors(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {"tests/test_broken.py": "def test_x(:\n"})
    run = run_tests(root, SPEC)
    assert run.errors == 1 and run.passed == 0


FORGED_REPORT = """\
import atexit, os, sys

def _claim_success():
    junit = next(arg.split("=", 1)[-1] for arg in sys.argv if "junit" in arg)
    junit = sys.argv[sys.argv.index("--junitxml") + 1] if "--junitxml" in sys.argv else junit
    with open(junit, "w") as out:
        out.write('<testsuites><testsuite tests="3" failures="0" errors="0" skipped="0" time="0.1"/></testsuites>')

def pytest_unconfigure(config):
    atexit.register(_claim_success)  # after pytest has written its own report
"""


def test_a_report_that_counts_no_failure_does_not_pass_a_run_whose_tests_failed(tmp_path: Path) -> None:
    """The workspace's own code runs inside pytest and can write over its report; pytest's exit status is the other
    witness: a run passes only when both say so."""
    root = workspace(tmp_path / "ws", {"tests/test_sample.py": TESTS, "tests/conftest.py": FORGED_REPORT})
    run = run_tests(root, SPEC)
    assert (run.passed, run.failed, run.errors) == (3, 0, 0)  # what the forged report says
    assert run.exit_status == 1
    assert not run.succeeded


@pytest.mark.parametrize(
    ("suite", "why"),
    [
        ('tests="3" failures="-2"', "negative"),
        ('tests="-1"', "negative"),
        ('tests="2" time="nan"', "time"),
        ('tests="2" time="inf"', "time"),
        ('tests="two"', "invalid literal"),
    ],
)
def test_a_report_with_counts_no_run_has_is_unreadable(tmp_path: Path, suite: str, why: str) -> None:
    root = workspace(tmp_path / "ws", {})
    report = f"<testsuites><testsuite {suite}/></testsuites>"
    spec = {**SPEC, "tests": ["python", "-c", f"import sys; open(sys.argv[1], 'w').write({report!r})", "{junit}"]}
    with pytest.raises(WorkspaceCommandFailed, match=f"unreadable JUnit report: .*{why}"):
        run_tests(root, spec)


def test_a_run_without_report_fails(tmp_path: Path) -> None:
    root = workspace(tmp_path / "ws", {})
    spec = {**SPEC, "tests": ["python", "-c", "import sys; sys.exit('no pytest here')"]}
    with pytest.raises(WorkspaceCommandFailed, match="no JUnit report"):
        run_tests(root, spec)


def test_a_command_missing_from_the_policy_fails(tmp_path: Path, window: DataWindow) -> None:
    with pytest.raises(WorkspaceCommandFailed, match="does not define"):
        evaluate(tmp_path, window, {"tests": SPEC["tests"]})
