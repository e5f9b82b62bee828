"""Checks on what a patch writes: hidden characters, whether it applies, whether the Python still parses,
and which forbidden constructs it adds (on the syntax tree, see :mod:`libs.patch_guard.ast_rules`): the
deny-list, a second layer under the allow-list of :mod:`libs.patch_guard.code_checks`."""

from __future__ import annotations

from collections.abc import Collection

from libs.patch_guard.ast_rules import ConstructFinding, forbidden_constructs, new_constructs
from libs.patch_guard.constructs import Category
from libs.patch_guard.diff_parse import FileChange
from libs.patch_guard.file_images import FileImage
from libs.patch_guard.fragments import scan_lines
from libs.patch_guard.hunk_apply import split_lines
from libs.patch_guard.paths import is_python
from libs.patch_guard.report import CheckResult, Finding, judged, skipped
from libs.patch_guard.source_trees import SourceTrees
from libs.patch_guard.text_rules import foreign_coding, hidden_characters
from libs.python_source.source_text import ends_lines_in_carriage_return

CODING_LINES = (1, 2)


def check_no_hidden_text(changes: list[FileChange], images: list[FileImage]) -> CheckResult:
    findings = []
    befores = {image.path: image.before for image in images if image.change.operation != "create"}
    for change in changes:
        carriage_returns = _ends_lines_in_carriage_return(change, befores.get(change.path))
        for hunk in change.hunks:
            for number, text in hunk.numbered("+"):
                for hidden in hidden_characters(
                    text, first_line_of_file=number == 1, carriage_returns_end_lines=carriage_returns
                ):
                    findings.append(Finding(detail=hidden, path=change.path, line=number))
    for image in images:
        if is_python(image.path):
            findings.extend(_foreign_codings(image))
    return judged("no_hidden_text", findings, "no hidden characters or foreign encodings", "hidden text")


def _ends_lines_in_carriage_return(change: FileChange, before: str | None) -> bool:
    """Whether the file's own lines, before the patch, end in a lone ``\\r``: the workspace's file when the guard
    read it, else the old side of the hunks (the lines the patch says the file has, which ``git apply`` checks). A
    file the patch creates has no lines of its own before it."""
    if change.operation == "create":
        return False
    if before is None:
        before = "".join(line for hunk in change.hunks for line in hunk.old_side())
    return ends_lines_in_carriage_return(before)


def _foreign_codings(image: FileImage) -> list[Finding]:
    if image.known and image.after is not None:
        head = list(enumerate(split_lines(image.after)[: len(CODING_LINES)], start=1))
    else:
        head = [(n, text) for hunk in image.change.hunks for n, text in hunk.numbered(" +") if n in CODING_LINES]
    return [
        Finding(
            detail=f"coding declaration {coding!r}: only UTF-8 is read the same by every tool", path=image.path, line=n
        )
        for n, text in head
        if (coding := foreign_coding(text)) is not None
    ]


def check_applies_cleanly(images: list[FileImage], workspace_given: bool) -> CheckResult:
    if not workspace_given:
        return skipped("applies_cleanly", "no workspace given")
    findings = [Finding(detail=image.problem, path=image.path) for image in images if image.problem]
    return judged("applies_cleanly", findings, "every hunk matches the workspace", "does not apply")


def check_python_syntax(images: list[FileImage], trees: SourceTrees) -> CheckResult:
    python = [image for image in images if is_python(image.path) and image.after is not None]
    known = [image for image in python if image.known]
    if not known:
        reason = "no whole Python file to parse" + (" (judged by hunks)" if python else "")
        return skipped("python_syntax", reason)
    findings = []
    for image in known:
        assert image.after is not None
        error = trees.parsed(image.after)
        if isinstance(error, SyntaxError):
            findings.append(Finding(detail=f"syntax error: {error.msg}", path=image.path, line=error.lineno))
        elif isinstance(error, ValueError):
            findings.append(Finding(detail=str(error), path=image.path))
    return judged("python_syntax", findings, f"{len(known)} Python file(s) parse", "does not parse")


def check_forbidden_constructs(
    images: list[FileImage], categories: Collection[Category], trees: SourceTrees
) -> CheckResult:
    findings: list[Finding] = []
    partial = False
    for image in images:
        if not is_python(image.path) or image.change.operation == "delete":
            continue
        whole = _whole_file_constructs(image, categories, trees)
        if whole is None:
            partial = True
            findings.extend(_hunk_constructs(image, categories))
        else:
            findings.extend(_finding(image.path, construct) for construct in whole)
    ok = "no new forbidden construct" + (" (hunks only: no whole file known)" if partial else "")
    return judged("forbidden_constructs", findings, ok, "forbidden construct")


def _whole_file_constructs(
    image: FileImage, categories: Collection[Category], trees: SourceTrees
) -> list[ConstructFinding] | None:
    """New constructs of the whole file after the patch, or None when it is not known or does not parse."""
    if not image.known or image.after is None:
        return None
    after = trees.tree(image.after)
    if after is None:
        return None
    before = trees.tree(image.before or "")
    before_constructs = forbidden_constructs(before, categories) if before is not None else []
    return new_constructs(before_constructs, forbidden_constructs(after, categories))


def _hunk_constructs(image: FileImage, categories: Collection[Category]) -> list[Finding]:
    added = scan_lines([pair for hunk in image.change.hunks for pair in hunk.numbered("+")], categories)
    removed = scan_lines([pair for hunk in image.change.hunks for pair in hunk.numbered("-")], categories)
    findings = [
        _finding(image.path, construct) for construct in new_constructs(list(removed.findings), list(added.findings))
    ]
    findings.extend(
        Finding(detail=f"cannot be checked: {line.reason}", path=image.path, line=line.line)
        for line in added.unverifiable
    )
    return findings


def _finding(path: str, construct: ConstructFinding) -> Finding:
    return Finding(detail=f"{construct.category}: {construct.description}", path=path, line=construct.line)
