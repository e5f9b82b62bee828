"""``modelguard guard PATCH_FILE --workspace DIR [--json]`` as a team's CI runs it: a real process, a real
workspace, the corpus's patches; exit 0 accepted, 3 refused, 1 unreadable input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from libs.patch_guard.report import CHECK_NAMES
from tests.unit.patch_guard.model_workspace import BUNDLE_YAML, build_workspace

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "unit" / "patch_guard" / "corpus"


def guard(*args: str, stdin: bytes | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "MODELGUARD_CENTRAL_POLICY"}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "modelguard", "guard", *args],
        cwd=cwd,
        env=env,
        input=stdin.decode("utf-8") if stdin is not None else None,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    """A bundle-shaped folder: bundle.yaml (repair_paths ["pkg/*.py"]) and the workspace below it."""
    build_workspace(tmp_path)
    (tmp_path / "bundle.yaml").write_text(BUNDLE_YAML, encoding="utf-8")
    return tmp_path


def test_accepts_a_small_guard_division_patch(bundle: Path) -> None:
    result = guard(str(CORPUS / "accept_guarded_division.patch"), "--workspace", str(bundle / "workspace"))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert f"config {bundle / 'bundle.yaml'}" in lines[0]
    assert [line.split(" ", 2)[1].rstrip(":") for line in lines[1:-1]] == list(CHECK_NAMES)
    assert "PASS forbidden_constructs: no new forbidden construct" in lines
    assert lines[-1] == "ACCEPTED"


def test_refuses_a_patch_to_the_tests_and_says_why(bundle: Path) -> None:
    result = guard(str(CORPUS / "protected_tests_weakened.patch"), "--workspace", str(bundle / "workspace"))
    assert result.returncode == 3
    assert "FAIL protected_paths: protected path: tests/test_features.py: protected by 'tests/**'" in result.stdout
    assert "FAIL permitted_paths: path not permitted: tests/test_features.py: outside ['pkg/*.py'," in result.stdout


def test_json_report(bundle: Path) -> None:
    result = guard(
        str(CORPUS / "forbidden_os_system_through_existing_alias.patch"),
        "--workspace",
        str(bundle / "workspace"),
        "--json",
    )
    assert result.returncode == 3
    report = json.loads(result.stdout)
    assert (report["decision"], report["accepted"]) == ("refused", False)
    assert report["files"] == ["pkg/features.py"] and report["workspace_config"] == str(bundle / "bundle.yaml")
    assert [check["name"] for check in report["checks"]] == list(CHECK_NAMES)
    assert {check["status"] for check in report["checks"]} <= {"passed", "failed", "skipped"}
    failed = {check["name"]: check for check in report["checks"] if check["status"] == "failed"}
    assert set(failed) == {"allowed_new_code", "always_refused", "forbidden_constructs"}
    assert failed["forbidden_constructs"]["findings"] == [
        {"detail": "process: os.system", "path": "pkg/features.py", "line": 10}
    ]


def test_without_a_bundle_the_central_paths_apply(tmp_path: Path) -> None:
    workspace = build_workspace(tmp_path)
    result = guard(str(CORPUS / "outside_repair_paths.patch"), "--workspace", str(workspace))
    assert result.returncode == 0, result.stdout
    assert "config none" in result.stdout.splitlines()[0]


def test_an_explicit_config_and_standard_input(bundle: Path, tmp_path: Path) -> None:
    config = tmp_path / "model-policy.yaml"
    config.write_text("repair:\n  allowed_paths: ['tools/*.py']\n", encoding="utf-8")
    patch = (CORPUS / "outside_repair_paths.patch").read_bytes()
    result = guard("-", "--workspace", str(bundle / "workspace"), "--config", str(config), stdin=patch)
    assert result.returncode == 0, result.stdout


def test_the_working_directory_cannot_choose_the_policy(bundle: Path) -> None:
    """A model repository that ships its own lax policy/central.yaml is not read."""
    workspace = bundle / "workspace"
    (workspace / "policy").mkdir()
    (workspace / "policy" / "central.yaml").write_text(
        "repair: {permitted_paths: ['**'], protected_paths: [], file_types: ['.py'], max_files: 9,"
        " max_changed_lines: 999, max_patch_bytes: 99999, forbidden_constructs: []}\n",
        encoding="utf-8",
    )
    result = guard(str(CORPUS / "forbidden_eval_call.patch"), "--workspace", ".", cwd=workspace)
    assert result.returncode == 3


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["/nonexistent.patch", "--workspace", "{workspace}"], "is not a file (PATCH_FILE)"),
        (["{patch}", "--workspace", "/nonexistent"], "is not a directory (--workspace)"),
        (["{patch}", "--workspace", "{workspace}", "--policy", "/nonexistent.yaml"], "cannot read the central policy"),
        (["{patch}", "--workspace", "{workspace}", "--config", "{patch}"], "not YAML"),
    ],
)
def test_unreadable_input_is_one_line_and_exit_2(bundle: Path, args: list[str], says: str) -> None:
    values = {"workspace": str(bundle / "workspace"), "patch": str(CORPUS / "accept_guarded_division.patch")}
    result = guard(*[arg.format(**values) for arg in args])
    assert result.returncode == 2  # bad input, as for every command (modelguard/exit_codes.py)
    assert says in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
