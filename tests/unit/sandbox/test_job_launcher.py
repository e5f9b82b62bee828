"""The launcher, the one file of ModelGuard's that runs in a model's own image, run as it would be there: copied
out of the source tree, under an interpreter that is not ModelGuard's and cannot import any of it (the system's
python3, ``-I -S``). It must need nothing but the standard library, run the command with that interpreter, keep
stdout and stderr apart, stop it at the wall time and the output cap, hand the kernel its limits, and record how
it ended."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from libs.sandbox.job import launcher
from tests.support.foreign_python import foreign_python

LIMITS = {
    "cpu_s": 30,
    "memory_bytes": 1024**3,
    "wall_s": 20,
    "output_bytes": 4096,
    "file_size_bytes": 64 * 1024,
    "max_processes": 64,
}


def _launch(tmp_path: Path, argv: list[str], **limits: float) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Copy the launcher out of the tree and run it with the foreign interpreter on a plan for ``argv``."""
    python = foreign_python()
    plan_dir, results, scratch, cwd = (tmp_path / name for name in ("plan", "results", "scratch", "revision"))
    for folder in (plan_dir, results, scratch, cwd):
        folder.mkdir(parents=True)
    (plan_dir / "launch.py").write_bytes(Path(launcher.__file__).read_bytes())
    plan = {
        "argv": argv,
        "cwd": str(cwd),
        "limits": {**LIMITS, **limits},
        "results": str(results),
        "scratch": str(scratch),
        "outputs": [],
    }
    (plan_dir / "plan.json").write_text(json.dumps(plan))
    environment = {"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": "ghp_secret", "MODELGUARD_HOME": "/var/lib/modelguard"}
    done = subprocess.run(
        [str(python), "-I", "-S", str(plan_dir / "launch.py"), str(plan_dir / "plan.json")],
        cwd="/",
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, results


def _status(results: Path) -> dict[str, Any]:
    status: dict[str, Any] = json.loads((results / "status.json").read_text())
    return status


def test_the_launcher_imports_only_the_standard_library_and_parses_as_python_3_8() -> None:
    tree = ast.parse(Path(launcher.__file__).read_text(), feature_version=(3, 8))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    assert imported, "the walk found the imports"
    assert imported - {"__future__"} <= sys.stdlib_module_names, imported - sys.stdlib_module_names


def test_a_command_runs_with_the_images_interpreter_and_none_of_modelguard(tmp_path: Path) -> None:
    program = (
        "import importlib.util, json, os, sys\n"
        "print(json.dumps({'executable': sys.executable, 'cwd': os.getcwd(), 'env': sorted(os.environ),"
        " 'importable': [n for n in ('libs', 'modelguard', 'pydantic') if importlib.util.find_spec(n)]}))\n"
        "print('to stderr', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    done, results = _launch(tmp_path, ["python", "-c", program])
    seen = json.loads((results / "stdout").read_text())
    assert seen["executable"] == str(foreign_python())
    assert seen["cwd"] == str(tmp_path / "revision")
    assert seen["importable"] == [], "nothing of ModelGuard's in the model's image"
    assert not [name for name in seen["env"] if "TOKEN" in name or name.startswith("MODELGUARD")]
    assert {"HOME", "TMPDIR", "PYTHONHASHSEED", "PATH"} <= set(seen["env"])
    assert (results / "stderr").read_text() == "to stderr\n"
    status = _status(results)
    assert (done.returncode, status["returncode"], status["killed_for"]) == (3, 3, None)
    assert status["cpu_s"] >= 0 and status["max_rss_bytes"] > 0 and status["duration_s"] > 0


def test_only_python_may_run(tmp_path: Path) -> None:
    done, results = _launch(tmp_path, ["bash", "-c", "touch /tmp/ran"])
    assert done.returncode == launcher.EXIT_REFUSED
    assert "only python may run" in done.stderr
    assert not (results / "status.json").exists() and not (results / "stdout").exists()


def test_the_output_cap_stops_the_command(tmp_path: Path) -> None:
    done, results = _launch(tmp_path, ["python", "-c", "import time\nwhile True: print('x' * 1000, flush=True)"])
    status = _status(results)
    assert status["killed_for"] == "output"
    assert (results / "stdout").stat().st_size <= LIMITS["output_bytes"]
    assert done.returncode == 128 + 9


def test_the_wall_time_stops_the_command(tmp_path: Path) -> None:
    started = time.monotonic()
    done, results = _launch(tmp_path, ["python", "-c", "import time; time.sleep(60)"], wall_s=1)
    assert time.monotonic() - started < 30
    assert _status(results)["killed_for"] == "wall_time" and done.returncode == 128 + 9


def test_the_kernel_holds_the_cpu_and_file_size_limits(tmp_path: Path) -> None:
    _, results = _launch(tmp_path / "cpu", ["python", "-c", "while True: pass"], cpu_s=1)
    assert _status(results)["returncode"] in (-24, -9), "SIGXCPU, or SIGKILL a second later"
    writes = "import os\nwith open(os.environ['TMPDIR'] + '/big', 'wb') as f:\n    f.write(b'x' * 200000)\n"
    _, results = _launch(tmp_path / "size", ["python", "-c", writes])
    status = _status(results)
    assert status["returncode"] != 0
    assert status["returncode"] == -25 or "File too large" in (results / "stderr").read_text()


@pytest.mark.parametrize(
    "plan",
    [
        {"argv": "python -V"},
        {"argv": ["python"], "cwd": "relative"},
        {"argv": ["python"], "limits": {**LIMITS, "wall_s": -1}},
        {"argv": ["python"], "limits": {**LIMITS, "output_bytes": True}},
    ],
)
def test_a_malformed_plan_is_refused(tmp_path: Path, plan: dict[str, Any]) -> None:
    base = {"argv": ["python"], "cwd": "/", "results": str(tmp_path), "scratch": str(tmp_path), "limits": LIMITS}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({**base, **plan}))
    with pytest.raises(launcher.PlanRefused):
        launcher.read_plan(str(path))
    assert os.listdir(tmp_path) == ["plan.json"]
