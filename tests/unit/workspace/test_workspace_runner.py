from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from libs.sandbox.environment import PINNED
from libs.workspace.runner import CommandNotAllowed, CommandTimedOut, run_command
from tests.support.waiting import wait_until

PRINT_ENV = "import json, os; print(json.dumps(dict(os.environ)))"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["bash", "-c", "echo hi"],
        ["sh", "-c", "python -V"],
        [sys.executable, "-V"],
        ["/usr/bin/python3", "-V"],
        ["python3", "-V"],
        ["python -V"],
    ],
)
def test_refuses_anything_but_the_allow_listed_python(argv: list[str], tmp_path: Path) -> None:
    with pytest.raises(CommandNotAllowed):
        run_command(argv, cwd=tmp_path, timeout_s=10)


def test_runs_python_as_the_current_interpreter(tmp_path: Path) -> None:
    result = run_command(["python", "-c", "import sys; print(sys.executable)"], cwd=tmp_path, timeout_s=30)
    assert result.returncode == 0
    assert result.stdout.strip() == sys.executable
    assert result.argv == ["python", "-c", "import sys; print(sys.executable)"]
    assert result.duration_s >= 0


def test_does_not_leak_secrets_into_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_TEST_TOKEN", "do-not-leak")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "do-not-leak")
    monkeypatch.setenv("PYTHONPATH", "/somewhere/else")
    result = run_command(["python", "-c", PRINT_ENV], cwd=tmp_path, timeout_s=30)
    env = json.loads(result.stdout)
    assert "MODELGUARD_TEST_TOKEN" not in env
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert "do-not-leak" not in result.stdout
    assert "PYTHONPATH" not in env


def test_environment_is_scrubbed_and_pinned(tmp_path: Path) -> None:
    result = run_command(["python", "-c", PRINT_ENV], cwd=tmp_path, timeout_s=30)
    env = json.loads(result.stdout)
    assert set(env) <= {"PATH", "HOME", "TMPDIR", *PINNED, "LC_CTYPE", "PWD"}
    assert env["PYTHONHASHSEED"] == "0"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert env["OMP_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"
    # removed off the command's path (libs/sandbox/folder_removal.py), soon after it
    assert wait_until(lambda: not Path(env["HOME"]).exists(), 30), "the temporary HOME is removed after the command"
    assert Path(env["HOME"]) != Path.home()


def test_non_zero_exit_is_returned_not_raised(tmp_path: Path) -> None:
    result = run_command(["python", "-c", "import sys; print('out'); sys.exit('boom')"], cwd=tmp_path, timeout_s=30)
    assert result.returncode == 1
    assert not result.succeeded
    assert result.stdout.strip() == "out"
    assert "boom" in result.stderr


def test_runs_in_the_given_directory(tmp_path: Path) -> None:
    result = run_command(["python", "-c", "import os; print(os.getcwd())"], cwd=tmp_path, timeout_s=30)
    assert Path(result.stdout.strip()).resolve() == tmp_path.resolve()


def test_timeout_kills_the_command(tmp_path: Path) -> None:
    with pytest.raises(CommandTimedOut) as raised:
        run_command(["python", "-c", "import time; time.sleep(30)"], cwd=tmp_path, timeout_s=0.5)
    assert raised.value.timeout_s == 0.5
