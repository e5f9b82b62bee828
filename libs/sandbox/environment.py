"""The whole environment a sandboxed command sees, built from nothing: no variable of ModelGuard's own
process (tokens, ``MODELGUARD_*``, proxies, ``PYTHONPATH``) reaches the workspace's code."""

from __future__ import annotations

import sys
from pathlib import Path

from libs.sandbox.workspace_interpreter import WorkspaceInterpreter

SYSTEM_PATH = ("/usr/bin", "/bin")
PINNED = {
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    # one thread per numeric library: results do not depend on the machine's core count
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
}


def interpreter_bin_dir() -> Path:
    """The folder of ModelGuard's interpreter as invoked (a virtual environment's ``bin``, not the base)."""
    return Path(sys.executable).parent


def search_path(environment: WorkspaceInterpreter | None = None) -> str:
    """The interpreter's folder (a workspace environment's ``bin`` when one is given), then the system's."""
    first = environment.bin_dir if environment is not None else interpreter_bin_dir()
    return ":".join(dict.fromkeys([str(first), *SYSTEM_PATH]))


def sandbox_environment(home: Path, tmpdir: Path, environment: WorkspaceInterpreter | None = None) -> dict[str, str]:
    """PATH (the interpreter's folder, /usr/bin, /bin), HOME and TMPDIR in the command's scratch folder,
    and the pinned locale, hash seed and thread counts. Nothing is copied from ``os.environ``."""
    return {"PATH": search_path(environment), "HOME": str(home), "TMPDIR": str(tmpdir), **PINNED}
