"""What a workspace's config says about repairs: the globs a repair may edit, and the commands whose
files it must never edit (the evaluation entry point, the test targets).

Two documents carry it: a scenario bundle's ``bundle.yaml`` (``workspace.repair_paths``,
``workspace.evaluate``, ``workspace.tests``, ``workspace.label``) and a model policy (``repair.allowed_paths``,
``repair.protected_paths``, ``repair.max_files``, ``repair.max_changed_lines``, ``workspace.evaluate``).
Either can only narrow the central policy (see :mod:`libs.patch_guard.policy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from libs.policy.errors import problem_message
from libs.policy.model_policy import WorkspacePolicy
from libs.policy.repair import CatalogueStrategies, RepairNarrowing

TEST_RUNNERS = frozenset({"pytest", "unittest", "nose2"})


class WorkspaceConfigError(ValueError):
    """A workspace config that cannot be read."""


class WorkspaceRepairConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    path_scopes: tuple[tuple[str, ...], ...] = ()
    """Glob lists a repaired path must each match (a bundle's ``repair_paths``, a policy's
    ``allowed_paths``); none means the central policy's own."""
    protected_paths: tuple[str, ...] = ()
    max_files: int | None = Field(default=None, ge=1)
    max_changed_lines: int | None = Field(default=None, ge=1)
    evaluate: tuple[str, ...] = ()
    predict: tuple[str, ...] = ()
    tests: tuple[str, ...] = ()
    strategies: CatalogueStrategies | None = None
    labels: tuple[str, ...] = ()
    """The label (target) columns: ``workspace.label``, one name or a list."""

    @field_validator("path_scopes")
    @classmethod
    def _relative_globs(cls, scopes: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        for glob in (glob for scope in scopes for glob in scope):
            if glob.startswith("/") or ".." in glob.split("/"):
                raise ValueError(f"repair path {glob!r} is not inside the workspace")
        return scopes

    def protected_globs(self) -> list[str]:
        entry_points = [glob for command in (self.predict, self.evaluate) for glob in entry_point_globs(command)]
        return [*self.protected_paths, *entry_points, *command_protected_paths((), self.tests)]


def command_protected_paths(evaluate: Sequence[str], tests: Sequence[str]) -> list[str]:
    """The evaluation entry point and the test targets named by the workspace's own commands."""
    protected = entry_point_globs([str(argument) for argument in evaluate])
    for argument in [str(argument) for argument in tests][1:]:
        if argument.startswith("-") or "{" in argument or ":" in argument or argument in TEST_RUNNERS:
            continue
        target = argument.rstrip("/")
        protected.extend([target, f"{target}/**"])
    return protected


def entry_point_globs(argv: Sequence[str]) -> list[str]:
    """``[python, evaluate.py, ...]`` protects ``evaluate.py``; ``[python, -m, pkg.evaluate]`` protects
    ``pkg/evaluate.py`` and ``pkg/evaluate/**``; ``[./bin/evaluate, ...]`` protects ``bin/evaluate``."""
    if not argv:
        return []
    protected: list[str] = []
    if "/" in argv[0] and not argv[0].startswith("/"):
        protected.append(PurePosixPath(argv[0]).as_posix())
    arguments = list(argv)[1:]
    for index, argument in enumerate(arguments):
        if argument == "-m" and index + 1 < len(arguments):
            module = PurePosixPath(*arguments[index + 1].split("."))
            return [*protected, module.with_suffix(".py").as_posix(), f"{module.as_posix()}/**"]
        if argument.endswith(".py"):
            return [*protected, PurePosixPath(argument).as_posix()]
    return protected


def workspace_config_from_document(document: Mapping[str, Any], origin: str) -> WorkspaceRepairConfig:
    """A bundle's ``workspace:`` section or a model policy's ``repair:`` and ``workspace:`` sections."""
    workspace = _section(document, "workspace", origin)
    repair = _section(document, "repair", origin)
    unknown = sorted(set(workspace) - set(WorkspacePolicy.model_fields))
    if unknown:
        raise WorkspaceConfigError(f"{origin}: workspace: unknown key {unknown[0]!r}")
    scopes = [scope for scope in (workspace.get("repair_paths"), repair.get("allowed_paths")) if scope is not None]
    try:
        return WorkspaceRepairConfig(
            path_scopes=tuple(tuple(_strings(scope, origin)) for scope in scopes),
            protected_paths=tuple(_strings(repair.get("protected_paths") or [], origin)),
            max_files=repair.get("max_files"),
            max_changed_lines=repair.get("max_changed_lines"),
            evaluate=tuple(_strings(workspace.get("evaluate") or [], origin)),
            predict=tuple(_strings(workspace.get("predict") or [], origin)),
            tests=tuple(_strings(workspace.get("tests") or [], origin)),
            strategies=tuple(_strings(repair["strategies"], origin)) if "strategies" in repair else None,
            labels=tuple(_labels(workspace.get("label"), origin)),
        )
    except ValidationError as error:
        raise WorkspaceConfigError(f"{origin}: {problem_message(error)}") from error


def workspace_repair_config(
    workspace: WorkspacePolicy | None, narrowing: RepairNarrowing | None
) -> WorkspaceRepairConfig:
    """What an already-parsed model policy says about repairs: its workspace's ``repair_paths``, commands and
    label, and a ``repair:`` section of the older shape (``allowed_paths``, ``protected_paths``, limits)."""
    scopes = [workspace.repair_paths] if workspace is not None else []
    if narrowing is not None and narrowing.allowed_paths is not None:
        scopes.append(narrowing.allowed_paths)
    try:
        return WorkspaceRepairConfig(
            path_scopes=tuple(scopes),
            protected_paths=narrowing.protected_paths if narrowing is not None else (),
            max_files=narrowing.max_files if narrowing is not None else None,
            max_changed_lines=narrowing.max_changed_lines if narrowing is not None else None,
            evaluate=(workspace.evaluate or ()) if workspace is not None else (),
            predict=(workspace.predict or ()) if workspace is not None else (),
            tests=(workspace.tests or ()) if workspace is not None else (),
            strategies=narrowing.strategies if narrowing is not None else None,
            labels=(workspace.label,) if workspace is not None else (),
        )
    except ValidationError as error:
        raise WorkspaceConfigError(f"workspace config: {problem_message(error)}") from error


def load_workspace_config(path: Path) -> WorkspaceRepairConfig:
    try:
        document = yaml.safe_load(path.read_bytes())
    except OSError as error:
        raise WorkspaceConfigError(f"cannot read {path}: {error.strerror or error}") from error
    except yaml.YAMLError as error:
        raise WorkspaceConfigError(f"{path}: not YAML") from error
    except RecursionError:  # PyYAML composes a node per level, recursively
        raise WorkspaceConfigError(f"{path}: not YAML this reader can take: nested past the parser's limit") from None
    if not isinstance(document, dict):
        raise WorkspaceConfigError(f"{path}: not a mapping")
    return workspace_config_from_document(document, str(path))


def _section(document: Mapping[str, Any], name: str, origin: str) -> Mapping[str, Any]:
    section = document.get(name) or {}
    if not isinstance(section, Mapping):
        raise WorkspaceConfigError(f"{origin}: '{name}' is not a mapping")
    return section


def _labels(value: Any, origin: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return _strings(value, origin)


def _strings(value: Any, origin: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str | int | float) for item in value):
        raise WorkspaceConfigError(f"{origin}: expected a list of strings, got {value!r}")
    return [str(item) for item in value]
