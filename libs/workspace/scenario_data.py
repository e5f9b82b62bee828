"""Produce a scenario's customer dataset by running its seeded generator."""

from __future__ import annotations

from pathlib import Path

from libs.workspace.runner import run_command
from libs.workspace.scenario import Scenario

GENERATOR_TIMEOUT_S = 120.0


class DataGenerationFailed(RuntimeError):
    pass


def generate_scenario_data(scenario: Scenario, dest_dir: Path) -> Path:
    """Write ``scenario.data.file_name`` into ``dest_dir`` and return its path; same seed, same bytes."""
    dest_dir = Path(dest_dir).resolve()
    dest_dir.mkdir(parents=True, exist_ok=True)
    output = dest_dir / scenario.data.file_name
    spec = scenario.data
    argv = ["python", spec.generator.name, "--rows", str(spec.rows), "--seed", str(spec.seed)]
    result = run_command([*argv, "--output", str(output)], cwd=spec.generator.parent, timeout_s=GENERATOR_TIMEOUT_S)
    if not result.succeeded or not output.is_file():
        raise DataGenerationFailed(
            f"{spec.generator} failed with exit {result.returncode}: {result.stderr[-2000:].strip()}"
        )
    return output
