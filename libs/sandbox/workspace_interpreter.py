"""A workspace's own Python environment, as the sandbox runs it: a virtual environment ModelGuard built from the
workspace's declaration (``libs/workspace_env``), inside the environment cache, on ModelGuard's base interpreter.

The sandbox shows it read-only, puts its ``bin`` first on PATH and runs its ``python`` for the program name
``python``. It refuses (fail closed) an environment that is not one ModelGuard built where it keeps them: a root
outside the cache, an interpreter that is not the root's ``bin/python``, or one that resolves to a binary outside
ModelGuard's own base installation (which the sandbox shows anyway)."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.process import CommandNotAllowed
from libs.sandbox.protected_paths import inside

MARKER = "pyvenv.cfg"


@dataclass(frozen=True)
class WorkspaceInterpreter:
    root: Path
    """The environment's folder: ``<cache>/<digest>``."""
    cache: Path
    """The folder every built environment lives in."""

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"


def base_installation() -> Path:
    """ModelGuard's base interpreter installation: the only place a workspace environment's ``python`` may lead."""
    return Path(os.path.realpath(sys.base_prefix))


def checked(interpreter: WorkspaceInterpreter) -> WorkspaceInterpreter:
    """``interpreter`` with its paths resolved, or CommandNotAllowed (one line) when it is not a built environment
    inside the cache whose ``python`` leads to ModelGuard's base installation."""
    cache = Path(os.path.realpath(interpreter.cache))
    root = Path(os.path.realpath(interpreter.root))
    if root == cache or not inside(root, cache) or root.parent != cache:
        raise CommandNotAllowed(f"refused the workspace environment {root}: it is not a folder of the cache {cache}")
    if not (root / MARKER).is_file():
        raise CommandNotAllowed(f"refused the workspace environment {root}: no {MARKER}, not a built environment")
    python = root / "bin" / "python"
    if not os.path.lexists(python):
        raise CommandNotAllowed(f"refused the workspace environment {root}: it has no bin/python")
    target = Path(os.path.realpath(python))
    base = base_installation()
    if not (inside(target, base) or inside(target, root)) or not os.access(target, os.X_OK):
        raise CommandNotAllowed(
            f"refused the workspace environment {root}: its python leads to {target}, outside {base} and itself"
        )
    return WorkspaceInterpreter(root=root, cache=cache)
