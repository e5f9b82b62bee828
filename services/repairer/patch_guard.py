"""The patch guard: what a proposed repair may change, decided from the diff text itself.

The policy's ``repair`` section sets the permitted strategies, the allowed paths, the protected paths and
the size limits. On top of it some paths are always protected, whatever the policy says: the tests and
the commands that judge a repair (the evaluation entry point and test targets named in the workspace
spec), build hooks and dependency files, CI configuration, and ModelGuard's own code and policy.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, computed_field

from services.repairer.path_globs import matches_any
from services.repairer.unified_diff import FilePatch, MalformedDiff, parse_unified_diff

PERMITTED_SUFFIXES = frozenset({".py"})

ALWAYS_PROTECTED: tuple[str, ...] = (
    # tests and test configuration
    "tests/**",
    "**/tests/**",
    "test/**",
    "**/test_*.py",
    "**/*_test.py",
    "**/conftest.py",
    # build hooks and dependency files
    "**/setup.py",
    "**/setup.cfg",
    "**/pyproject.toml",
    "**/requirements*.txt",
    "**/requirements/**",
    "**/Pipfile",
    "**/Pipfile.lock",
    "**/poetry.lock",
    "**/tox.ini",
    "**/noxfile.py",
    "**/Makefile",
    "**/Dockerfile",
    "**/sitecustomize.py",
    "**/usercustomize.py",
    "**/*.pth",
    "**/*.sh",
    # CI configuration and repository plumbing
    ".github/**",
    ".ci/**",
    ".circleci/**",
    ".gitlab-ci.yml",
    ".pre-commit-config.yaml",
    ".git/**",
    "scripts/**",
    # ModelGuard's own code and policy
    "**/policy.yaml",
    "modelguard/**",
    ".modelguard/**",
)

UNSAFE_TOKENS: dict[str, re.Pattern[str]] = {
    "subprocess": re.compile(r"\bsubprocess\b"),
    "os process or file call": re.compile(
        r"\bos\s*\.\s*(system|popen|exec\w*|spawn\w*|fork|kill|remove|unlink|rmdir|removedirs|rename|"
        r"replace|chmod|chown|putenv|environ)\b"
    ),
    "eval": re.compile(r"\beval\s*\("),
    "exec": re.compile(r"\bexec\s*\("),
    "compile": re.compile(r"\bcompile\s*\("),
    "dynamic import": re.compile(r"__import__|\bimportlib\b"),
    "socket": re.compile(r"\bsocket\b"),
    "network client": re.compile(r"\b(urllib|requests|httpx|http\.client|ftplib|smtplib|aiohttp)\b"),
    "open for write": re.compile(r"\bopen\s*\(.*?(?:,\s*|mode\s*=\s*)['\"][^'\"]*[wax+][^'\"]*['\"]"),
    "file write": re.compile(r"\.\s*(write_text|write_bytes|unlink|rmdir|rename|replace|chmod|touch)\s*\("),
    "shutil": re.compile(r"\bshutil\b"),
    "deserialisation": re.compile(r"\b(pickle|marshal|shelve|dill)\b"),
    "ctypes": re.compile(r"\bctypes\b"),
    "interpreter state": re.compile(r"\b(globals|setattr|delattr)\s*\(|\bsys\s*\.\s*(modules|path)\b|\bbuiltins\b"),
}


class RepairLimits(BaseModel):
    """The policy's ``repair`` section."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    strategies: tuple[str, ...]
    allowed_paths: tuple[str, ...]
    max_files: int
    max_changed_lines: int
    protected_paths: tuple[str, ...] = ()


class ProposedPatch(BaseModel):
    model_config = ConfigDict(frozen=True)

    strategy: str
    unified_diff: str
    files: tuple[str, ...] = ()
    """Files the strategy says it changed; they must be exactly the files of the diff."""


class GuardViolation(BaseModel):
    model_config = ConfigDict(frozen=True)

    rule: str
    detail: str
    path: str | None = None


class GuardVerdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    allowed: bool
    violations: tuple[GuardViolation, ...]
    files: tuple[str, ...]
    added_lines: int
    removed_lines: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def changed_lines(self) -> int:
        return self.added_lines + self.removed_lines


def check_patch(
    patch: ProposedPatch, repair_policy: Mapping[str, Any], workspace_spec: Mapping[str, Any] | None = None
) -> GuardVerdict:
    """Every rule the patch breaks; ``allowed`` only when it breaks none."""
    limits = RepairLimits.model_validate(repair_policy)
    violations: list[GuardViolation] = []
    if patch.strategy not in limits.strategies:
        violations.append(
            GuardViolation(rule="strategy_not_permitted", detail=f"{patch.strategy!r} is not in {limits.strategies}")
        )
    try:
        files = parse_unified_diff(patch.unified_diff)
    except MalformedDiff as error:
        violations.append(GuardViolation(rule="malformed_patch", detail=str(error)))
        return _verdict(violations, [])
    if not files:
        violations.append(GuardViolation(rule="empty_patch", detail="the patch changes no file"))
    violations.extend(_size_violations(files, limits))
    declared = sorted(set(patch.files))
    if declared and declared != sorted({file.path for file in files}):
        violations.append(
            GuardViolation(rule="declared_files_mismatch", detail=f"declared {declared}, diff changes {_paths(files)}")
        )
    protected = (*ALWAYS_PROTECTED, *limits.protected_paths, *spec_protected_paths(workspace_spec or {}))
    for file in files:
        violations.extend(_file_violations(file, limits, protected))
    return _verdict(violations, files)


def spec_protected_paths(workspace_spec: Mapping[str, Any]) -> list[str]:
    """The evaluation entry point and the test targets named by the workspace's own commands."""
    protected: list[str] = []
    evaluate = [str(arg) for arg in workspace_spec.get("evaluate") or []]
    protected.extend(_entry_point_globs(evaluate))
    tests = [str(arg) for arg in workspace_spec.get("tests") or []]
    for argument in tests[1:]:
        if argument.startswith("-") or "{" in argument or argument in ("pytest", "unittest"):
            continue
        target = argument.rstrip("/")
        protected.extend([target, f"{target}/**"])
    return protected


def _entry_point_globs(argv: Sequence[str]) -> list[str]:
    arguments = list(argv)[1:]
    for index, argument in enumerate(arguments):
        if argument == "-m" and index + 1 < len(arguments):
            module = PurePosixPath(*arguments[index + 1].split("."))
            return [module.with_suffix(".py").as_posix(), f"{module.as_posix()}/**"]
        if argument.endswith(".py"):
            return [argument]
    return []


def _size_violations(files: list[FilePatch], limits: RepairLimits) -> list[GuardViolation]:
    violations = []
    if len(files) > limits.max_files:
        violations.append(
            GuardViolation(rule="too_many_files", detail=f"{len(files)} files changed, at most {limits.max_files}")
        )
    changed = sum(len(file.added) + len(file.removed) for file in files)
    if changed > limits.max_changed_lines:
        violations.append(
            GuardViolation(
                rule="too_many_changed_lines",
                detail=f"{changed} lines changed, at most {limits.max_changed_lines}",
            )
        )
    return violations


def _file_violations(file: FilePatch, limits: RepairLimits, protected: Sequence[str]) -> list[GuardViolation]:
    violations = []
    for path in dict.fromkeys(path for path in (file.old_path, file.new_path) if path is not None):
        pure = PurePosixPath(path)
        if pure.is_absolute() or ".." in pure.parts or "\\" in path:
            violations.append(GuardViolation(rule="path_outside_workspace", detail="not a workspace path", path=path))
            continue
        if pure.suffix not in PERMITTED_SUFFIXES:
            violations.append(
                GuardViolation(rule="file_type_not_permitted", detail=f"only {sorted(PERMITTED_SUFFIXES)}", path=path)
            )
        if matches_any(path, limits.allowed_paths) is None:
            violations.append(
                GuardViolation(rule="path_not_allowed", detail=f"outside {list(limits.allowed_paths)}", path=path)
            )
        if (pattern := matches_any(path, protected)) is not None:
            violations.append(GuardViolation(rule="path_protected", detail=f"protected by {pattern!r}", path=path))
    if file.old_path is None or file.new_path is None or file.old_path != file.new_path:
        violations.append(
            GuardViolation(rule="file_created_deleted_or_renamed", detail="only edits in place", path=file.path)
        )
    for line in file.added:
        for name, pattern in UNSAFE_TOKENS.items():
            if pattern.search(line):
                violations.append(
                    GuardViolation(rule="unsafe_token", detail=f"{name}: {line.strip()[:120]}", path=file.path)
                )
    return violations


def _verdict(violations: list[GuardViolation], files: list[FilePatch]) -> GuardVerdict:
    return GuardVerdict(
        allowed=not violations,
        violations=tuple(violations),
        files=tuple(_paths(files)),
        added_lines=sum(len(file.added) for file in files),
        removed_lines=sum(len(file.removed) for file in files),
    )


def _paths(files: list[FilePatch]) -> list[str]:
    return sorted({file.path for file in files})
