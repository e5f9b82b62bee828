"""Run every check of the patch guard on one patch and put the results in one report.

The guard reads the patch as untrusted bytes: they must be UTF-8 text without NUL bytes, under the
central policy's size limit, and a diff read exactly as ``git apply`` reads it. When a workspace is given
the guard also follows its tree (symbolic links, files the patch edits) without writing anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.patch_guard.code_checks import check_allowed_new_code, check_always_refused
from libs.patch_guard.content_checks import (
    check_applies_cleanly,
    check_forbidden_constructs,
    check_no_hidden_text,
    check_python_syntax,
)
from libs.patch_guard.diff_headers import MalformedDiff
from libs.patch_guard.diff_parse import FileChange, parse_diff
from libs.patch_guard.file_images import file_images
from libs.patch_guard.generated_files import check_generated_code
from libs.patch_guard.policy import EffectivePolicy
from libs.patch_guard.report import CHECK_NAMES, CheckResult, Finding, GuardReport, judged, passed, skipped
from libs.patch_guard.source_trees import SourceTrees
from libs.patch_guard.structure_checks import (
    check_declared_files,
    check_file_operations,
    check_file_types,
    check_max_changed_lines,
    check_max_files,
    check_no_binary,
    check_no_symlinks,
    check_not_empty,
    check_paths_inside_workspace,
    check_permitted_paths,
    check_protected_paths,
    check_strategy,
)


@dataclass(frozen=True)
class GuardRequest:
    patch: bytes | str
    policy: EffectivePolicy
    workspace: Path | None = None
    """The workspace the patch is for; without it only the diff is judged (weaker: see fragments)."""
    strategy: str | None = None
    declared_files: tuple[str, ...] | None = None
    """The files the patch's author says it changes; they must be exactly the diff's files."""
    approved: Path | None = None
    """The approved (base) revision's tree: a name its version of a file used is not new code (a revert)."""
    trees: SourceTrees | None = None
    """The parsed texts to share with the other guard calls of one repair handling; None: this call's own."""


def check_patch(request: GuardRequest) -> GuardReport:
    raw = request.patch.encode("utf-8") if isinstance(request.patch, str) else request.patch
    readable, text = _check_readable(raw, request.policy.central.max_patch_bytes)
    if text is None:
        return _report([readable], "the patch is not readable")
    try:
        changes = parse_diff(text)
    except MalformedDiff as error:
        failed = judged("diff_parses", [Finding(detail=str(error))], "", "malformed diff")
        return _report([readable, failed], "the diff cannot be read")
    results = [readable, passed("diff_parses", "a well-formed unified diff"), *_checks(request, changes)]
    return _report(
        results,
        "",
        files=tuple(sorted({change.path for change in changes})),
        added=sum(len(change.added) for change in changes),
        removed=sum(len(change.removed) for change in changes),
    )


def _checks(request: GuardRequest, changes: list[FileChange]) -> list[CheckResult]:
    policy, workspace = request.policy, request.workspace
    images = file_images(changes, workspace, request.approved)
    trees = request.trees if request.trees is not None else SourceTrees()  # one parse of each text for every check
    return [
        check_not_empty(changes),
        check_no_binary(changes),
        check_no_symlinks(changes, workspace),
        check_paths_inside_workspace(changes, workspace),
        check_file_operations(changes, policy),
        check_file_types(changes, policy),
        check_permitted_paths(changes, policy),
        check_protected_paths(changes, policy),
        check_generated_code(images, policy.central.generated_paths, workspace),
        check_max_files(changes, policy),
        check_max_changed_lines(changes, policy),
        check_strategy(request.strategy, policy),
        check_declared_files(changes, request.declared_files),
        check_no_hidden_text(changes, images),
        check_applies_cleanly(images, workspace is not None),
        check_python_syntax(images, trees),
        check_allowed_new_code(images, policy.central.new_code, trees),
        check_always_refused(images, policy.labels, trees),
        check_forbidden_constructs(images, policy.central.forbidden_constructs, trees),
    ]


def _check_readable(raw: bytes, limit: int) -> tuple[CheckResult, str | None]:
    if len(raw) > limit:
        detail = f"{len(raw)} bytes, at most {limit}"
        return judged("patch_readable", [Finding(detail=detail)], "", "patch too large"), None
    if b"\x00" in raw:
        return judged("patch_readable", [Finding(detail="NUL byte in the patch")], "", "not text"), None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        detail = f"not UTF-8 at byte {error.start}"
        return judged("patch_readable", [Finding(detail=detail)], "", "not UTF-8 text"), None
    return passed("patch_readable", f"{len(raw)} bytes of UTF-8 text"), text


def _report(
    results: list[CheckResult], skip_reason: str, files: tuple[str, ...] = (), added: int = 0, removed: int = 0
) -> GuardReport:
    by_name = {result.name: result for result in results}
    checks = tuple(by_name.get(name) or skipped(name, f"not run: {skip_reason}") for name in CHECK_NAMES)
    assert len(by_name) == len(results) and set(by_name) <= set(CHECK_NAMES)
    return GuardReport(checks=checks, files=files, added_lines=added, removed_lines=removed)
