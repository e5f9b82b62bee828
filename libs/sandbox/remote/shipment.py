"""What the caller sends the workspace runner for one command, decided on the caller's side with the caller's
protected paths, the same way its own sandbox decides what to show (``libs/sandbox/arguments.py``):

- the working directory, packed whole (a protected path inside it becomes an empty stand-in, as the sandbox
  covers it);
- each input the command line names that the runner could not read anyway (outside the working directory and
  the system and interpreter folders), unless it is refused: a protected path, or something the runner
  cannot receive (an input that holds the working directory, a special file, a folder with a link out of it).
  A secret the command line names is **never sent**: it stays in ``refused_inputs`` and fails the run, as it
  would locally;
- the output folders (created empty on the runner), and the output files the command line names;
- the command line with every path argument spelled as its real path, which is where the runner places it
  under a folder of its own (``mirrored_argument``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs.sandbox.arguments import OUTPUT_OPTIONS, DeclaredPaths, declared_paths, split_path_argument
from libs.sandbox.confinement import SYSTEM_FOLDERS, interpreter_paths
from libs.sandbox.protected_paths import ProtectedPaths, inside


@dataclass(frozen=True)
class ShippedInput:
    path: Path
    kind: Literal["file", "folder"]


@dataclass(frozen=True)
class Shipment:
    argv: tuple[str, ...]
    """As sent: each path argument spelled as its real path."""
    cwd: Path
    inputs: tuple[ShippedInput, ...]
    output_folders: tuple[Path, ...]
    output_files: tuple[Path, ...]
    """The output files the command line names (a file already there may be replaced only for these)."""
    refused_inputs: tuple[str, ...]
    refused_outputs: tuple[str, ...]


def fixed_folders() -> list[Path]:
    """Readable in every sandbox, and the same on the caller and the runner (one image): the system folders and
    the interpreter's. Paths inside them are neither sent nor moved."""
    system = [Path(name) for name in SYSTEM_FOLDERS if Path(name).is_dir() and not Path(name).is_symlink()]
    return [*system, *interpreter_paths()]


def _named_as_output(argument: str, previous: str) -> bool:
    split = split_path_argument(argument)
    option = split[0].removesuffix("=") if split is not None else ""
    return option in OUTPUT_OPTIONS or previous in OUTPUT_OPTIONS


def canonical_argument(argument: str, previous: str) -> str:
    """``argument`` with the absolute path it names spelled as the sandbox resolves it: an existing input's real
    path, an output's real folder and its name; any other text unchanged."""
    split = split_path_argument(argument)
    if split is None:
        return argument
    prefix, text = split
    path = Path(text)
    if path.exists() and not _named_as_output(argument, previous):
        return prefix + os.path.realpath(path)
    folder = os.path.realpath(path.parent)
    if os.path.isdir(folder) and path.name:
        return prefix + os.path.join(folder, path.name)
    return prefix + os.path.normpath(text)


def mirrored_argument(argument: str, root: Path, fixed: Sequence[Path]) -> str:
    """On the runner: the path ``argument`` names, placed under ``root`` (its own folder for the command), unless
    it lies in a system or interpreter folder (the runner's own, the same image) or is ``/`` itself."""
    split = split_path_argument(argument)
    if split is None:
        return argument
    prefix, text = split
    path = os.path.normpath(text)
    if path == "/" or any(inside(Path(path), folder) for folder in fixed):
        return argument
    return prefix + str(root) + path


def _input_refusal(path: Path, cwd: Path) -> str | None:
    if inside(cwd, path):
        return "holds the working directory: the workspace runner receives it as the revision only"
    if not (path.is_file() or path.is_dir()) or path.is_symlink():
        return "not a regular file or folder: the workspace runner cannot receive it"
    return None


def _inputs(declared: DeclaredPaths, cwd: Path) -> tuple[list[ShippedInput], list[str]]:
    shipped: list[ShippedInput] = []
    refused: list[str] = []
    for path in sorted(declared.inputs, key=lambda p: len(p.parts)):
        if any(inside(path, given.path) for given in shipped):
            continue  # inside an input already sent: it arrives with that folder
        why = _input_refusal(path, cwd)
        if why is not None:
            refused.append(f"{path}: {why}")
            continue
        shipped.append(ShippedInput(path, "folder" if path.is_dir() else "file"))
    order = {path: index for index, path in enumerate(declared.inputs)}
    shipped.sort(key=lambda given: order[given.path])
    return shipped, refused


def plan_shipment(argv: Sequence[str], cwd: Path, protected: ProtectedPaths, fixed: Sequence[Path]) -> Shipment:
    """The shipment for ``argv`` run in ``cwd`` (a real path)."""
    declared = declared_paths(argv[1:], protected, cwd=cwd, fixed=fixed)
    inputs, refused = _inputs(declared, cwd)
    previous = ""
    canonical = [argv[0]]
    for argument in argv[1:]:
        canonical.append(canonical_argument(argument, previous))
        previous = argument
    return Shipment(
        argv=tuple(canonical),
        cwd=cwd,
        inputs=tuple(inputs),
        output_folders=declared.outputs,
        output_files=declared.output_files,
        refused_inputs=(*declared.refused_inputs, *refused),
        refused_outputs=declared.refused_outputs,
    )
