"""The bubblewrap argument list for one command: what of the file system it sees, and how.

The command's root is empty (bubblewrap's own tmpfs, read-only once built). Shown read-only: the system's
folders (``/usr``, ``/etc`` and the ``/bin``, ``/lib`` links), the interpreter's installation, the working
directory and the command's inputs. Writable: its scratch HOME and TMPDIR and its output folders, each a
fresh folder of the sandbox's own (``libs/sandbox/staging.py``) mounted where the command expects it. Every
protected path that falls inside what is shown is covered: an empty read-only folder, or ``/dev/null`` for a
file. Nothing else exists: no ``/home``, ``/root``, ``/tmp`` (empty), ``/run``, ``/var``, ``/sys``, no parent
folder of the working directory, no ModelGuard checkout.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from libs.sandbox.workspace_interpreter import WorkspaceInterpreter

SYSTEM_FOLDERS = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
EMPTY_FOLDERS = ("/tmp", "/var/tmp")
NAMESPACES_AS_ROOT = (
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-net",
    "--unshare-uts",
    "--unshare-cgroup-try",
)
NAMESPACES_AS_USER = ("--unshare-user", "--disable-userns", *NAMESPACES_AS_ROOT)
SESSION = ("--die-with-parent",)
"""Not ``--new-session``: the command is already a session of its own, without a controlling terminal
(``libs/sandbox/process.py`` starts bubblewrap with ``setsid``); a second session would leave the session group
whose niceness ModelGuard lowered."""
KEEP_FOR_DROP = ("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
DROP_PROGRAM = (
    "import os, sys\n"
    "uid, gid = int(sys.argv[1]), int(sys.argv[2])\n"
    "os.setgroups([])\n"
    "os.setresgid(gid, gid, gid)\n"
    "os.setresuid(uid, uid, uid)\n"
    "if os.getuid() != uid or os.geteuid() != uid or os.getgid() != gid or os.getgroups():\n"
    "    sys.exit('modelguard sandbox: could not drop to uid %d' % uid)\n"
    "os.execv(sys.argv[3], sys.argv[3:])\n"
)
"""Run first inside the sandbox when ModelGuard is root: become the unprivileged uid (which clears every
capability) and only then start the command."""


@dataclass(frozen=True)
class Mount:
    source: Path
    target: Path


@dataclass(frozen=True)
class View:
    """What one command sees. Every path absolute, links resolved."""

    cwd: Mount
    readable: tuple[Mount, ...] = ()
    """Read-only: the interpreter's folders and the command's inputs."""
    writable: tuple[Mount, ...] = ()
    """Read-write: the scratch HOME and TMPDIR and the output folders."""
    protected: tuple[Path, ...] = ()
    """Hidden wherever they fall inside something shown."""


@dataclass(frozen=True)
class Identity:
    """Who the command runs as."""

    uid: int
    gid: int
    drop_from_root: bool
    """bubblewrap runs as root without a user namespace and the command starts as ``uid`` (DROP_PROGRAM);
    otherwise bubblewrap runs as ModelGuard's own user in a user namespace."""

    def describe(self) -> str:
        if self.drop_from_root:
            return f"uid {self.uid}, gid {self.gid}: ModelGuard runs as root, the command starts unprivileged"
        who = "root outside the sandbox" if self.uid == 0 else "ModelGuard's own user"
        return f"uid {self.uid}, gid {self.gid} ({who}) in a user namespace without capabilities"


def interpreter_paths(environment: WorkspaceInterpreter | None = None) -> tuple[Path, ...]:
    """What the command's interpreter needs to start. ModelGuard's own (the default): its environment, its base
    installation, the binary. A workspace's environment (checked by the caller, ``workspace_interpreter.checked``):
    that environment and ModelGuard's base installation it was built on, and not ModelGuard's own environment, so
    the command imports what the workspace declared and nothing ModelGuard installed for itself."""
    if environment is None:
        return _own_interpreter_paths()
    paths = [environment.root, Path(sys.base_prefix), Path(sys.executable).resolve().parent]
    return tuple(dict.fromkeys(Path(os.path.realpath(path)) for path in paths))


@cache
def _own_interpreter_paths() -> tuple[Path, ...]:
    """ModelGuard's own interpreter's folders, resolved once per process (about 0.4 ms, at every command)."""
    paths = [Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix), Path(sys.executable).resolve().parent]
    return tuple(dict.fromkeys(Path(os.path.realpath(path)) for path in paths))


def drop_interpreter() -> str:
    """The binary DROP_PROGRAM runs with (``-I -S``: no environment needed): ModelGuard's interpreter with its links
    resolved, which lies in a folder every view shows (``interpreter_paths``)."""
    return os.path.realpath(sys.executable)


def _depth(path: Path) -> int:
    return len(path.parts)


def _system_operations() -> list[list[str]]:
    operations = []
    for name in SYSTEM_FOLDERS:
        path = Path(name)
        if path.is_symlink():
            operations.append(["--symlink", os.readlink(path), name])
        elif path.is_dir():
            operations.append(["--ro-bind", name, name])
    return operations


def shown_folders(view: View) -> list[Path]:
    """Every path bound into the sandbox, as the command sees it."""
    system = [Path(name) for name in SYSTEM_FOLDERS if Path(name).is_dir() and not Path(name).is_symlink()]
    return [*system, *(mount.target for mount in (view.cwd, *view.readable, *view.writable))]


def covers_needed(view: View) -> list[Path]:
    """The protected paths to cover: those that exist inside something shown, or are a system folder (a
    protected path that holds something shown is not shown itself: nothing is bound there). A link whose
    target does not exist hides nothing."""
    shown = {str(folder) for folder in shown_folders(view)}
    system = [Path(name) for name in SYSTEM_FOLDERS]
    return sorted(
        path
        for path in set(view.protected)
        if (path in system or _under_one_of(str(path), shown, strictly=True)) and os.path.exists(path)
    )


def _under_one_of(path: str, folders: set[str], *, strictly: bool = False) -> bool:
    """Whether ``path`` lies under one of ``folders`` (or is one, unless ``strictly``): all absolute and normalised,
    as text. The same answer as ``inside`` against each folder, by a lookup of each of the path's ancestors."""
    if not strictly and path in folders:
        return True
    while (cut := path.rfind("/")) > 0:
        path = path[:cut]
        if path in folders:
            return True
    return "/" in folders


def _parents(targets: Iterable[Path], bound: Sequence[Path], covers: Sequence[Path]) -> list[Path]:
    """Folders to create (mode 0755) on the way to each mount: those no bound folder provides (outside every
    bound folder, or inside a cover's empty tmpfs). bubblewrap would create them 0700 and root's, which an
    unprivileged command could not walk through."""
    bound_texts, cover_texts = {str(folder) for folder in bound}, {str(cover) for cover in covers}
    needed: set[str] = set()
    for target in targets:
        parent = str(target)
        while (cut := parent.rfind("/")) > 0:
            parent = parent[:cut]
            if parent in cover_texts or parent in needed:
                continue
            if _under_one_of(parent, cover_texts) or not _under_one_of(parent, bound_texts):
                needed.add(parent)
    return sorted(Path(parent) for parent in needed)


def bwrap_mounts(view: View) -> list[str]:
    """Mount operations in order: shallow paths first, so that a deeper mount lands on top of a shallower
    one (the sandbox's own ``/dev`` and ``/proc`` with the system folders, so a folder shown under ``/dev``, a
    temporary folder in ``/dev/shm``, lands on top of them); the root and every cover made read-only at the end."""
    covers = covers_needed(view)
    read_only = [view.cwd, *view.readable]
    real_binds = [Path(name) for name in SYSTEM_FOLDERS] + [mount.target for mount in read_only]
    targets = [m.target for m in (*read_only, *view.writable)] + covers + [Path(p) for p in EMPTY_FOLDERS]
    operations: list[tuple[int, int, list[str]]] = [(1, 0, arguments) for arguments in _system_operations()]
    operations += [(1, 0, ["--dev", "/dev"]), (1, 0, ["--proc", "/proc"])]
    parents = _parents(targets, real_binds, covers)
    operations += [(_depth(p), 1, ["--perms", "0755", "--dir", str(p)]) for p in parents]
    operations += [(_depth(Path(p)), 1, ["--perms", "0755", "--dir", p]) for p in EMPTY_FOLDERS]
    blank = [path for path in covers if path.is_dir()]
    operations += [(_depth(p), 2, ["--perms", "0755", "--tmpfs", str(p)]) for p in blank]
    operations += [(_depth(p), 2, ["--ro-bind", "/dev/null", str(p)]) for p in covers if p not in blank]
    operations += [(_depth(m.target), 3, ["--ro-bind", str(m.source), str(m.target)]) for m in read_only]
    operations += [(_depth(m.target), 4, ["--bind", str(m.source), str(m.target)]) for m in view.writable]
    ordered = [argument for *_, arguments in sorted(operations, key=lambda op: op[:2]) for argument in arguments]
    read_only_again = [argument for path in ["/", *map(str, blank)] for argument in ("--remount-ro", path)]
    return [*ordered, *read_only_again]


def bwrap_argv(
    program: str, view: View, identity: Identity, command: Sequence[str], env: Mapping[str, str] | None = None
) -> list[str]:
    """``command`` inside bubblewrap with ``view``, started as ``identity``, with ``env`` and nothing else as its
    environment (``--clearenv``, then ``--setenv`` each): whatever bubblewrap itself was started with stays out."""
    if identity.drop_from_root:
        prefix = [*NAMESPACES_AS_ROOT, *SESSION, *KEEP_FOR_DROP]
        start = [drop_interpreter(), "-I", "-S", "-c", DROP_PROGRAM, str(identity.uid), str(identity.gid)]
    else:
        prefix = [*NAMESPACES_AS_USER, *SESSION, "--cap-drop", "ALL"]
        start = []
    chdir = ["--chdir", str(view.cwd.target)]
    environment = ["--clearenv", *(part for name, value in (env or {}).items() for part in ("--setenv", name, value))]
    return [program, *prefix, *bwrap_mounts(view), *chdir, *environment, "--", *start, *command]
