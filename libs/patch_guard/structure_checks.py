"""Checks on what a patch touches and how much: read from the diff's headers and counts alone (plus, for
symbolic links and escapes, the workspace's own tree)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from libs.patch_guard.diff_parse import FileChange, Hunk
from libs.patch_guard.hunk_apply import python_lines_changed
from libs.patch_guard.paths import path_shape_problem, resolves_inside, symlink_on_path
from libs.patch_guard.policy import EffectivePolicy
from libs.patch_guard.report import CheckResult, Finding, judged, passed, skipped
from libs.python_source.source_text import ends_lines_in_carriage_return

REGULAR_FILE_MODE = "100644"


def named_paths(changes: list[FileChange]) -> Iterator[str]:
    """Every distinct file name the patch gives."""
    yield from dict.fromkeys(name for change in changes for name in change.names)


def plain_paths(changes: list[FileChange]) -> list[str]:
    return [path for path in named_paths(changes) if path_shape_problem(path) is None]


def check_not_empty(changes: list[FileChange]) -> CheckResult:
    if changes:
        return passed("not_empty", f"{len(changes)} file(s) changed")
    return judged("not_empty", [Finding(detail="the patch changes no file")], "", "empty patch")


def check_no_binary(changes: list[FileChange]) -> CheckResult:
    findings = [Finding(detail="binary content", path=change.path) for change in changes if change.binary]
    return judged("no_binary", findings, "text only", "binary patch")


def check_no_symlinks(changes: list[FileChange], workspace: Path | None) -> CheckResult:
    findings = [
        Finding(detail=f"mode {change.new_mode or change.old_mode}: a symbolic link or submodule", path=change.path)
        for change in changes
        if change.links
    ]
    if workspace is not None:
        for path in plain_paths(changes):
            if hit := symlink_on_path(workspace, path):
                where = "outside the workspace" if hit.escapes else "inside the workspace"
                detail = f"{hit.link} is a symbolic link to {hit.target} ({where})"
                findings.append(Finding(detail=detail, path=path))
    ok = "no symbolic link" + ("" if workspace is not None else " in the patch (no workspace given)")
    return judged("no_symlinks", findings, ok, "symbolic link")


def check_paths_inside_workspace(changes: list[FileChange], workspace: Path | None) -> CheckResult:
    findings = []
    for path in named_paths(changes):
        if problem := path_shape_problem(path):
            findings.append(Finding(detail=problem, path=path))
        elif workspace is not None and not resolves_inside(workspace, path):
            findings.append(Finding(detail="resolves outside the workspace", path=path))
    return judged("paths_inside_workspace", findings, "every path is a plain workspace path", "path escape")


def check_file_operations(changes: list[FileChange], policy: EffectivePolicy) -> CheckResult:
    allowed = policy.central.file_operations
    findings = []
    for change in changes:
        if change.operation not in allowed:
            findings.append(
                Finding(detail=f"{change.operation} is not permitted (only {list(allowed)})", path=change.path)
            )
        mode_changed = change.mode_changed or (
            change.operation == "create" and change.new_mode not in (None, REGULAR_FILE_MODE)
        )
        if mode_changed and "mode_change" not in allowed:
            detail = f"mode {change.old_mode or '-'} -> {change.new_mode}: mode changes are not permitted"
            findings.append(Finding(detail=detail, path=change.path))
    return judged("file_operations", findings, f"only {', '.join(allowed)}", "file operation not permitted")


def check_file_types(changes: list[FileChange], policy: EffectivePolicy) -> CheckResult:
    types = policy.central.file_types
    findings = [
        Finding(detail=f"not one of {list(types)}", path=path)
        for path in plain_paths(changes)
        if PurePosixPath(path).suffix not in types
    ]
    return judged("file_types", findings, f"only {', '.join(types)}", "file type not permitted")


def check_permitted_paths(changes: list[FileChange], policy: EffectivePolicy) -> CheckResult:
    findings = []
    for path in plain_paths(changes):
        if (scope := policy.unpermitted_scope(path)) is not None:
            findings.append(Finding(detail=f"outside {list(scope)}", path=path))
    scopes = " and ".join(str(list(scope)) for scope in policy.path_scopes)
    return judged("permitted_paths", findings, f"inside {scopes}", "path not permitted")


def check_protected_paths(changes: list[FileChange], policy: EffectivePolicy) -> CheckResult:
    findings = []
    for path in plain_paths(changes):
        if (pattern := policy.protecting_pattern(path)) is not None:
            findings.append(Finding(detail=f"protected by {pattern!r}", path=path))
    return judged("protected_paths", findings, "no protected path", "protected path")


def check_max_files(changes: list[FileChange], policy: EffectivePolicy) -> CheckResult:
    count = len(changes)
    findings = [] if count <= policy.max_files else [Finding(detail=f"{count} files, at most {policy.max_files}")]
    return judged("max_files", findings, f"{count} of at most {policy.max_files}", "too many files")


def check_max_changed_lines(changes: list[FileChange], policy: EffectivePolicy) -> CheckResult:
    count = sum(_changed_line_count(hunk) for change in changes for hunk in change.hunks)
    limit = policy.max_changed_lines
    findings = [] if count <= limit else [Finding(detail=f"{count} lines changed, at most {limit}")]
    return judged("max_changed_lines", findings, f"{count} of at most {limit}", "too many changed lines")


def _changed_line_count(hunk: Hunk) -> int:
    """The hunk's removed and added lines, as git counts them; where a line of git's holds several of Python's
    (they end in a lone ``\\r``: a whole old-Mac-style file is one line to git), the Python lines its two sides
    differ by, so an edit of such a file is held to the limit as any other file's edit is."""
    changed = [line for line in hunk.lines if line.marker != " "]
    if not any(ends_lines_in_carriage_return(line.with_ending) for line in changed):
        return len(changed)
    return python_lines_changed("".join(hunk.old_side()), "".join(hunk.new_side()))


def check_strategy(strategy: str | None, policy: EffectivePolicy) -> CheckResult:
    if strategy is None:
        return skipped("strategy_permitted", "no strategy named")
    named, permitted = str(strategy), tuple(str(name) for name in policy.strategies)  # enum members as their names
    findings = [] if named in permitted else [Finding(detail=f"{named!r} is not in {permitted}")]
    return judged("strategy_permitted", findings, f"{named!r} is permitted", "strategy not permitted")


def check_declared_files(changes: list[FileChange], declared: tuple[str, ...] | None) -> CheckResult:
    if not declared:
        return skipped("declared_files", "no files declared")
    changed = sorted({change.path for change in changes})
    findings = (
        []
        if sorted(set(declared)) == changed
        else [Finding(detail=f"declared {sorted(declared)}, diff changes {changed}")]
    )
    return judged("declared_files", findings, "the diff changes exactly the declared files", "declared files differ")
