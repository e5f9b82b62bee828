"""Which paths a command's arguments name. An absolute path that exists is an **input**: it becomes readable
(nothing else outside the working directory is). A path that does not exist yet, or the value of an output
option (``--output``, ``--junitxml``), is an **output**: its folder becomes writable, as a fresh folder whose
files are copied back afterwards (``libs/sandbox/staging.py``).

Refused, with the reason in the report: an input inside a secret (a key, the ledger, ``/etc/shadow``...) or
holding a protected path; an output folder that is ``/``, lies inside a secret, holds a protected path, the
working directory or a system or interpreter folder, or lies inside one of those.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.protected_paths import ProtectedPaths, inside

OUTPUT_OPTIONS = frozenset({"--output", "--out", "-o", "--junitxml", "--junit-xml"})


@dataclass(frozen=True)
class DeclaredPaths:
    inputs: tuple[Path, ...] = ()
    """Inputs to mount (those outside the working directory and the always-readable folders)."""
    outputs: tuple[Path, ...] = ()
    """Output folders."""
    output_files: tuple[Path, ...] = ()
    """The output files the command line names."""
    refused_inputs: tuple[str, ...] = ()
    refused_outputs: tuple[str, ...] = ()
    """``path: why`` for each argument the sandbox did not honour."""


def split_path_argument(argument: str) -> tuple[str, str] | None:
    """``(the text before the path, the path)`` of an argument that names an absolute path, alone (``/p``) or
    as an option's value (``--output=/p``); None for any other argument."""
    option, equals, value = argument.partition("=") if argument.startswith("-") else ("", "", argument)
    return (option + equals, value) if value.startswith("/") else None


def _path_of(argument: str) -> tuple[Path | None, bool]:
    """The absolute path an argument names, and whether an output option names it (``--output=/p``)."""
    split = split_path_argument(argument)
    if split is None:
        return None, False
    option = split[0].removesuffix("=")
    return Path(split[1]), option in OUTPUT_OPTIONS


def _holds(folder: Path, paths: Sequence[Path]) -> Path | None:
    return next((path for path in paths if inside(path, folder)), None)


def input_refusal(path: Path, protected: ProtectedPaths) -> str | None:
    secret = protected.secret_holding(path)
    if secret is not None:
        return f"inside the protected {secret}"
    if path == Path("/"):
        return "the whole file system"
    held = _holds(path, protected.everything)
    return f"holds the protected {held}" if held is not None else None


def output_refusal(folder: Path, protected: ProtectedPaths, cwd: Path, fixed: Sequence[Path]) -> str | None:
    if folder == Path("/"):
        return "the root folder"
    secret = protected.secret_holding(folder)
    if secret is not None:
        return f"inside the protected {secret}"
    held = _holds(folder, protected.everything)
    if held is not None:
        return f"holds the protected {held}"
    if inside(cwd, folder) or inside(folder, cwd):
        return "the working directory is read-only"
    system = next((path for path in fixed if inside(path, folder) or inside(folder, path)), None)
    return f"a system or interpreter folder ({system})" if system is not None else None


def _needs_mount(path: Path, protected: ProtectedPaths, shown: Sequence[Path]) -> bool:
    """Not readable anyway: outside the working directory and the fixed folders, or hidden inside them."""
    return not any(inside(path, folder) for folder in shown) or _holds_any(path, protected.everything)


def _holds_any(path: Path, folders: Sequence[Path]) -> bool:
    return any(inside(path, folder) for folder in folders)


def declared_paths(
    arguments: Sequence[str], protected: ProtectedPaths, *, cwd: Path, fixed: Sequence[Path] = ()
) -> DeclaredPaths:
    """Absolute paths in ``arguments`` (alone or as ``--option=/path``), sorted into inputs to mount, output
    folders and refusals. ``fixed``: folders readable anyway (system, interpreter), never outputs."""
    inputs: list[Path] = []
    outputs: list[Path] = []
    files: list[Path] = []
    refused_inputs: list[str] = []
    refused_outputs: list[str] = []
    previous = ""
    for argument in arguments:
        path, named_as_output = _path_of(argument)
        named_as_output = named_as_output or previous in OUTPUT_OPTIONS
        previous = argument
        if path is None:
            continue
        if path.exists() and not named_as_output:
            resolved = Path(os.path.realpath(path))
            why = input_refusal(resolved, protected)
            if why is not None:
                refused_inputs.append(f"{path}: {why}")
            elif _needs_mount(resolved, protected, [cwd, *fixed]):
                inputs.append(resolved)
            continue
        folder = Path(os.path.realpath(path.parent))
        if not folder.is_dir():
            continue
        why = output_refusal(folder, protected, cwd, fixed)
        if why is not None:
            refused_outputs.append(f"{folder}: {why}")
            continue
        outputs.append(folder)
        files.append(folder / path.name)
    return DeclaredPaths(
        inputs=tuple(dict.fromkeys(inputs)),
        outputs=tuple(dict.fromkeys(outputs)),
        output_files=tuple(dict.fromkeys(files)),
        refused_inputs=tuple(dict.fromkeys(refused_inputs)),
        refused_outputs=tuple(dict.fromkeys(refused_outputs)),
    )
