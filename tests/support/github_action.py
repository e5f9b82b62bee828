"""Run the composite Action's step as a GitHub runner would: its inputs (the defaults of action.yml, then the
workflow's `with:`) rendered into the step's env, and its `run:` script executed by bash from the repository's
checkout, with GITHUB_ACTION_PATH, GITHUB_OUTPUT and GITHUB_STEP_SUMMARY set."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from modelguard.stack import REPO_ROOT

ACTION: dict[str, Any] = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
INPUT_REF = re.compile(r"\$\{\{\s*inputs\.([a-z0-9-]+)\s*\}\}")


@dataclass(frozen=True)
class ActionRun:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


def run_action(checkout: Path, scratch: Path, with_inputs: dict[str, str], timeout_s: float = 120) -> ActionRun:
    """The step's exit code, its log, its outputs (GITHUB_OUTPUT, parsed) and its step summary.

    GitHub evaluates the `${{ github.* }}` defaults before the step runs; pass every such input explicitly."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | with_inputs
    unrendered = sorted(name for name, value in inputs.items() if "${{" in value)
    if unrendered:
        raise ValueError(f"give the inputs a runner would render from the event: {', '.join(unrendered)}")
    [step] = ACTION["runs"]["steps"]
    step_env = {k: INPUT_REF.sub(lambda m: inputs[m.group(1)], str(v)) for k, v in step["env"].items()}
    scratch.mkdir(parents=True, exist_ok=True)
    outputs, summary = scratch / "github_output", scratch / "step_summary.md"
    outputs.write_text("")
    summary.write_text("")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(scratch),
        "GITHUB_ACTION_PATH": str(REPO_ROOT),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_WORKSPACE": str(checkout),
    }
    done = subprocess.run(
        ["bash", "-e", "-c", step["run"]],
        cwd=checkout,
        env=env | step_env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return ActionRun(done.returncode, done.stdout, done.stderr, written, summary.read_text())
