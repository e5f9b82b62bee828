"""Which Python environment a workspace revision declares, read from the files at its root (never run):

- ``uv.lock`` with ``pyproject.toml``: the lock is the environment (exported by uv, every package pinned);
- else ``requirements.txt``: every line one package from the index (``requirement_lines``); what they need, and
  any version a line leaves open, is resolved when the environment is built, once per digest, and recorded with it
  (pin every line with ``==``, or use a lock, for the same libraries on every machine);
- else nothing: the workspace runs with ModelGuard's own interpreter, as before.

A ``pyproject.toml`` without ``uv.lock`` declares nothing ModelGuard builds, even when it lists ``dependencies``:
such lists are package metadata, mostly unpinned ranges (``numpy``, ``scikit-learn>=1.3``); resolving them at
investigation time would evaluate two runs of one revision under different libraries, and refusing them would
refuse every repository that only describes itself. The declaration says so (``note``). A ``uv.lock`` without
its ``pyproject.toml`` is refused: uv cannot read one without the other.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from libs.workspace_env.failure import EnvironmentUnavailable
from libs.workspace_env.requirement_lines import Requirement, RequirementRefused, index_requirements

Kind = Literal["uv_lock", "requirements"]
LOCK, PROJECT, REQUIREMENTS = "uv.lock", "pyproject.toml", "requirements.txt"
DECLARATION_FILES = (LOCK, PROJECT, REQUIREMENTS)
MAX_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class DeclarationFile:
    name: str
    content: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()


@dataclass(frozen=True)
class Declaration:
    kind: Kind
    files: tuple[DeclarationFile, ...]
    requirements: tuple[Requirement, ...] = ()
    """The requirements file's lines (empty for a lock: uv exports its pins when building)."""

    @property
    def names(self) -> str:
        return " + ".join(file.name for file in self.files)

    def file(self, name: str) -> DeclarationFile:
        return next(file for file in self.files if file.name == name)


@dataclass(frozen=True)
class Detected:
    declaration: Declaration | None
    note: str = ""
    """Why a file that looks like a declaration was not taken as one (a pyproject.toml without a lock)."""


def _read(tree: Path, name: str) -> DeclarationFile | None:
    path = tree / name
    if path.is_symlink():
        raise EnvironmentUnavailable(f"{name} is a symbolic link; a declaration must be a file of the revision")
    if not path.is_file():
        return None
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise EnvironmentUnavailable(f"{name} is {size} bytes, over the {MAX_FILE_BYTES} a declaration may have")
    return DeclarationFile(name, path.read_bytes())


def _project_dependencies(project: DeclarationFile) -> list[str]:
    try:
        document = tomllib.loads(project.content.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise EnvironmentUnavailable(f"{PROJECT} is not valid TOML: {error}", declaration=PROJECT) from error
    except RecursionError:  # tomllib reads an array or inline table per level, recursively
        raise EnvironmentUnavailable(
            f"{PROJECT} is not TOML this reader can take: nested past the parser's limit", declaration=PROJECT
        ) from None
    project_table = document.get("project", {})
    if not isinstance(project_table, dict):
        raise EnvironmentUnavailable(f"{PROJECT}: [project] is not a table", declaration=PROJECT)
    listed = project_table.get("dependencies", [])
    return [str(item) for item in listed] if isinstance(listed, list) else []


def detect_declaration(tree: Path) -> Detected:
    """The environment the revision at ``tree`` declares; EnvironmentUnavailable for a refused declaration."""
    lock, project, requirements = (_read(tree, name) for name in DECLARATION_FILES)
    if lock is not None:
        if project is None:
            raise EnvironmentUnavailable(f"{LOCK} without {PROJECT}: uv reads a lock only with it", declaration=LOCK)
        return Detected(Declaration("uv_lock", (lock, project)))
    note = ""
    if project is not None and _project_dependencies(project):
        note = (
            f"{PROJECT} lists dependencies but no {LOCK} pins them: not built, the workspace runs with ModelGuard's "
            "own interpreter"
        )
    if requirements is None:
        return Detected(None, note)
    try:
        lines = index_requirements(requirements.content.decode("utf-8"), REQUIREMENTS)
    except UnicodeDecodeError as error:
        raise EnvironmentUnavailable(f"{REQUIREMENTS} is not UTF-8 text", declaration=REQUIREMENTS) from error
    except RequirementRefused as error:
        raise EnvironmentUnavailable(str(error), declaration=REQUIREMENTS) from error
    if not lines:
        return Detected(None, f"{REQUIREMENTS} lists no package")
    return Detected(Declaration("requirements", (requirements,), tuple(lines)))
