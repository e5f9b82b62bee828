"""The argument list that wraps a command in the isolation this machine allows.

With bubblewrap the command sees the whole file system read-only. Hidden (replaced by an empty read-only
folder, or /dev/null for a file): the shared temporary folders and run-time sockets (/tmp, /var/tmp, /run),
ModelGuard's state (``MODELGUARD_HOME``, its keys and artifacts folders) and the hidden entries of the user's
home (``~/.ssh``, ``~/.config``, ``~/.netrc``, ...). Writable: the scratch folder and the declared output
folders only. Readable even inside a hidden folder: the interpreter, the inputs named on the command line,
the working directory and its parent folder (unless that parent holds something hidden).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from libs.sandbox.isolation import BWRAP_NAMESPACES, UNSHARE_NAMESPACES, Isolation

SHARED_TEMPORARY = (Path("/tmp"), Path("/var/tmp"), Path("/run"))
STATE_VARIABLES = ("MODELGUARD_HOME", "MODELGUARD_KEYS_DIR", "MODELGUARD_ARTIFACTS_DIR")


def home_dot_entries(home: Path) -> list[Path]:
    """``~/.ssh``, ``~/.netrc``, ``~/.config``, ...: where credentials of the user live."""
    try:
        return sorted(entry for entry in home.iterdir() if entry.name.startswith("."))
    except OSError:
        return []


def modelguard_private_paths() -> tuple[Path, ...]:
    """What holds ModelGuard's keys, tokens and state: ``MODELGUARD_HOME`` (and its keys and artifacts folders
    when they are elsewhere) and the hidden entries of the user's home."""
    paths = [Path(os.environ.get("MODELGUARD_HOME", ".modelguard"))]
    paths += [Path(os.environ[name]) for name in STATE_VARIABLES[1:] if os.environ.get(name)]
    return tuple([*paths, *home_dot_entries(Path.home())])


def interpreter_paths() -> tuple[Path, ...]:
    """What ModelGuard's interpreter needs to start: its environment, its base installation, the binary."""
    return (Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.executable).resolve().parent)


@dataclass(frozen=True)
class Confinement:
    """Where a command may read and write. Paths are resolved before use."""

    cwd: Path
    scratch: Path
    outputs: tuple[Path, ...] = ()
    """Folders the command may write besides its scratch folder."""
    inputs: tuple[Path, ...] = ()
    """Files and folders the command must be able to read even inside a hidden folder (the working
    directory's parent among them, when it holds nothing hidden)."""
    hidden: tuple[Path, ...] = field(default_factory=modelguard_private_paths)
    read_only_cwd: bool = True


def _existing(paths: Iterable[Path]) -> list[Path]:
    resolved = {Path(os.path.realpath(path)) for path in paths}
    return sorted(path for path in resolved if path.exists() and path != Path("/"))


def _depth(path: Path) -> int:
    return len(path.parts)


def bwrap_mounts(confinement: Confinement) -> list[str]:
    """Mount operations, shallow paths first so that a deeper mount lands on top of a shallower one."""
    hidden = _existing([*SHARED_TEMPORARY, *confinement.hidden])
    blank = [path for path in hidden if path.is_dir()]
    readable = _existing([*interpreter_paths(), *confinement.inputs])
    writable = _existing([confinement.scratch, *confinement.outputs])
    cwd = _existing([confinement.cwd])
    operations: list[tuple[int, int, list[str]]] = []
    operations += [(_depth(path), 0, ["--tmpfs", str(path)]) for path in blank]
    operations += [(_depth(path), 0, ["--ro-bind", "/dev/null", str(path)]) for path in hidden if path not in blank]
    operations += [(_depth(path), 1, ["--ro-bind", str(path), str(path)]) for path in readable]
    bind = "--ro-bind" if confinement.read_only_cwd else "--bind"
    operations += [(_depth(path), 2, [bind, str(path), str(path)]) for path in cwd]
    operations += [(_depth(path), 3, ["--bind", str(path), str(path)]) for path in writable]
    ordered = [argument for _, _, arguments in sorted(operations, key=lambda op: op[:2]) for argument in arguments]
    read_only_again = [argument for path in blank for argument in ("--remount-ro", str(path))]
    return ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *ordered, *read_only_again]


def wrap(isolation: Isolation, confinement: Confinement, command: Sequence[str]) -> list[str]:
    """``command`` inside the sandbox ``isolation`` provides (unchanged when it provides none)."""
    if isolation.mechanism == "bwrap":
        cwd = os.path.realpath(confinement.cwd)
        return [str(isolation.program), *BWRAP_NAMESPACES, *bwrap_mounts(confinement), "--chdir", cwd, "--", *command]
    if isolation.mechanism == "unshare":
        return [str(isolation.program), *UNSHARE_NAMESPACES, *command]
    return list(command)
