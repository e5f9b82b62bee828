"""An interpreter that stands for a model's own image: it is not ModelGuard's and cannot import any of ModelGuard
(``libs``, ``services``, ``modelguard``) or its dependencies (pydantic). The system's ``/usr/bin/python3`` on this
project's machines (Debian's, with no site packages of ModelGuard's); a test that needs one fails in CI without it
and is skipped elsewhere."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

CANDIDATES = (Path("/usr/bin/python3"),)
PROBE = """
import importlib.util, json
names = ("libs", "services", "modelguard", "pydantic")
print(json.dumps({name: importlib.util.find_spec(name) is not None for name in names}))
"""


def foreign_python() -> Path:
    for candidate in CANDIDATES:
        if not candidate.is_file():
            continue
        done = subprocess.run(
            [str(candidate), "-c", PROBE], cwd="/", env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True
        )
        if done.returncode == 0 and '"libs": false' in done.stdout and '"pydantic": false' in done.stdout:
            return candidate
    message = "no interpreter without ModelGuard on this machine (/usr/bin/python3 without pydantic)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
