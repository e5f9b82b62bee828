"""Which paths a command's arguments name: a path that does not exist yet, or the value of an output option
(``--output``, ``--junitxml``), is an output and its folder is made writable, as long as that folder holds
nothing the sandbox protects; any other existing path is an input and stays readable."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

OUTPUT_OPTIONS = frozenset({"--output", "--out", "-o", "--junitxml", "--junit-xml"})


@dataclass(frozen=True)
class DeclaredPaths:
    inputs: tuple[Path, ...]
    outputs: tuple[Path, ...]
    refused_outputs: tuple[Path, ...]
    """Folders an argument would have made writable, refused because they hold protected paths."""


def _path_of(argument: str) -> tuple[Path | None, bool]:
    """The absolute path an argument names, and whether an output option names it (``--output=/p``)."""
    option, _, value = argument.partition("=") if argument.startswith("-") else ("", "", argument)
    return (Path(value) if value.startswith("/") else None), option in OUTPUT_OPTIONS


def covers(folder: Path, protected: Path) -> bool:
    """Whether ``folder`` is ``protected`` or one of its ancestors."""
    return protected == folder or protected.is_relative_to(folder)


def declared_paths(arguments: Sequence[str], protected: Iterable[Path]) -> DeclaredPaths:
    """Absolute paths in ``arguments`` (alone or as ``--option=/path``), split into inputs and output folders.
    An output folder that is ``/`` or contains any ``protected`` path stays read-only."""
    guarded = [path.resolve() for path in protected]
    inputs: list[Path] = []
    outputs: list[Path] = []
    refused: list[Path] = []
    previous = ""
    for argument in arguments:
        path, named_as_output = _path_of(argument)
        named_as_output = named_as_output or previous in OUTPUT_OPTIONS
        previous = argument
        if path is None:
            continue
        if path.exists() and not named_as_output:
            inputs.append(path.resolve())
            continue
        folder = path.parent.resolve()
        if not folder.is_dir():
            continue
        if folder == Path("/") or any(covers(folder, item) for item in guarded):
            refused.append(folder)
        else:
            outputs.append(folder)
    return DeclaredPaths(tuple(dict.fromkeys(inputs)), tuple(dict.fromkeys(outputs)), tuple(dict.fromkeys(refused)))
