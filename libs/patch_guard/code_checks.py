"""The allow-list of new code and the always-refused constructs, on each patched file.

``allowed_new_code``: every use (:mod:`libs.patch_guard.module_uses`) of the Python file after the patch
must be a use of the file before it, or admitted by the central policy's ``new_code`` list
(:mod:`libs.patch_guard.new_code_allowlist`). ``always_refused``: no construct of
:mod:`libs.patch_guard.always_refused` in a statement the patch adds or changes (nor more of one than the
module had), no identifier a reviewer can misread (:mod:`libs.patch_guard.identifier_scripts`), and in a
configuration file no added line :mod:`libs.patch_guard.config_text_rules` refuses.

When the whole file is not known (no workspace) both read the hunks alone (:mod:`libs.patch_guard.fragments`):
the old side of the hunks (context and removed lines) stands in for the module before the patch, and a
line that cannot be read alone refuses the patch.
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from libs.patch_guard.always_refused import RefusedFinding, new_refused, refused_constructs
from libs.patch_guard.changed_statements import ChangedStatements
from libs.patch_guard.config_text_rules import config_line_problems
from libs.patch_guard.file_images import FileImage
from libs.patch_guard.fragments import Fragment, parse_fragments
from libs.patch_guard.identifier_scripts import identifier_problem, identifiers, tree_identifiers
from libs.patch_guard.module_uses import Use, bound_names, module_uses, top_level_imports
from libs.patch_guard.new_code_allowlist import NewCodeAllowList
from libs.patch_guard.paths import is_python
from libs.patch_guard.report import CheckResult, Finding, judged
from libs.patch_guard.source_trees import SourceTrees

CONFIG_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".toml", ".ini", ".cfg"})


def check_allowed_new_code(images: list[FileImage], allowed: NewCodeAllowList, trees: SourceTrees) -> CheckResult:
    findings: list[Finding] = []
    partial = False
    for image in _python_images(images):
        whole = _whole_trees(image, trees)
        if whole is None:
            partial = True
            findings.extend(_hunk_introductions(image, allowed))
            continue
        before, after = whole
        known = module_uses(before)
        approved = trees.tree(image.approved) if image.approved is not None else None
        if approved is not None:  # what the approved revision of this file used was reviewed when it was approved
            known = {**module_uses(approved), **known}
        findings.extend(
            _introduced(image.path, use, line)
            for use, line in sorted(module_uses(after).items(), key=lambda item: (item[1], item[0]))
            if use not in known and not allowed.admits(use)
        )
    ok = "nothing new beyond the module's own uses and the allow-list" + (" (hunks only)" if partial else "")
    return judged("allowed_new_code", findings, ok, "introduces what the module does not use")


def check_always_refused(images: list[FileImage], labels: tuple[str, ...], trees: SourceTrees) -> CheckResult:
    findings: list[Finding] = []
    for image in images:
        if image.change.operation == "delete":
            continue
        if is_python(image.path):
            findings.extend(_python_refusals(image, labels, trees))
        elif PurePosixPath(image.path).suffix in CONFIG_SUFFIXES:
            findings.extend(_config_refusals(image, labels))
    return judged("always_refused", findings, "no always-refused construct added", "always-refused construct")


def _python_images(images: list[FileImage]) -> list[FileImage]:
    return [image for image in images if is_python(image.path) and image.change.operation != "delete"]


def _whole_trees(image: FileImage, trees: SourceTrees) -> tuple[ast.Module, ast.Module] | None:
    """The file before and after the patch, parsed, when both are known and parse."""
    if not image.known or image.after is None:
        return None
    after = trees.tree(image.after)
    before = trees.tree(image.before or "")
    if after is None or before is None:
        return None
    return before, after


def _hunk_introductions(image: FileImage, allowed: NewCodeAllowList) -> list[Finding]:
    old_side = parse_fragments([pair for hunk in image.change.hunks for pair in hunk.numbered(" -")], strict=False)
    added = parse_fragments([pair for hunk in image.change.hunks for pair in hunk.numbered("+")])
    everything = (*old_side.fragments, *added.fragments)
    local = frozenset().union(*(bound_names(fragment.tree) for fragment in everything))
    imports = tuple(node for fragment in everything for node in top_level_imports(fragment.tree))
    known = {use for fragment in old_side.fragments for use in module_uses(fragment.tree, local, imports)}
    findings = [
        _introduced(image.path, use, fragment.file_line(line))
        for fragment in added.fragments
        for use, line in sorted(module_uses(fragment.tree, local, imports).items(), key=lambda item: (item[1], item[0]))
        if use not in known and not allowed.admits(use)
    ]
    findings.extend(
        Finding(detail=f"cannot be checked: {line.reason}", path=image.path, line=line.line)
        for line in added.unverifiable
    )
    return findings


def _python_refusals(image: FileImage, labels: tuple[str, ...], trees: SourceTrees) -> list[Finding]:
    whole = _whole_trees(image, trees)
    if whole is None:
        return _hunk_refusals(image, labels)
    before, after = whole
    changed = ChangedStatements(after, image.added_lines)
    before_findings = [finding for finding, _ in refused_constructs(before, labels)]
    found = [
        _refused(image.path, finding)
        for finding in new_refused(before_findings, refused_constructs(after, labels), changed)
    ]
    found.extend(_identifier_findings(image, before, after))
    return _unique(found)


def _identifier_findings(image: FileImage, before: ast.Module, after: ast.Module) -> list[Finding]:
    """The identifiers on added lines a reviewer can misread. Only a non-ASCII identifier can be one
    (`identifier_problem`), so a file whose text after the patch is all ASCII has none, and neither text is
    tokenized; the module's identifiers before the patch are read only when a non-ASCII one was added."""
    after_text = image.after or ""
    if after_text.isascii():
        return []
    added = [
        (line, name)
        for line, name in (*identifiers(after_text), *tree_identifiers(after))
        if line in image.added_lines and not name.isascii()
    ]
    if not added:
        return []
    known = frozenset(name for _, name in (*identifiers(image.before or ""), *tree_identifiers(before)))
    return [
        Finding(detail=f"identifier: {problem}", path=image.path, line=line)
        for line, name in added
        if (problem := identifier_problem(name, known)) is not None
    ]


def _hunk_refusals(image: FileImage, labels: tuple[str, ...]) -> list[Finding]:
    added_lines = [pair for hunk in image.change.hunks for pair in hunk.numbered("+")]
    fragments: tuple[Fragment, ...] = parse_fragments(added_lines).fragments
    old_side = parse_fragments([pair for hunk in image.change.hunks for pair in hunk.numbered(" -")], strict=False)
    imports = tuple(node for fragment in (*old_side.fragments, *fragments) for node in top_level_imports(fragment.tree))
    found = [
        _refused(image.path, RefusedFinding(finding.category, finding.description, fragment.file_line(finding.line)))
        for fragment in fragments
        for finding, _ in refused_constructs(fragment.tree, labels, imports)
    ]
    old_text = "\n".join(text for hunk in image.change.hunks for _, text in hunk.numbered(" -"))
    known = frozenset(name for _, name in identifiers(old_text))
    written = [(number, name) for number, text in added_lines for _, name in identifiers(text)]
    parsed = [
        (fragment.file_line(line), name) for fragment in fragments for line, name in tree_identifiers(fragment.tree)
    ]
    for number, name in (*written, *parsed):
        if (problem := identifier_problem(name, known)) is not None:
            found.append(Finding(detail=f"identifier: {problem}", path=image.path, line=number))
    return _unique(found)


def _config_refusals(image: FileImage, labels: tuple[str, ...]) -> list[Finding]:
    return [
        Finding(detail=f"{category}: {description}", path=image.path, line=number)
        for hunk in image.change.hunks
        for number, text in hunk.numbered("+")
        for category, description in config_line_problems(text, labels)
    ]


def _introduced(path: str, use: Use, line: int) -> Finding:
    detail = f"{use.describe()}: a new {use.kind} the module did not use and new_code does not list"
    return Finding(detail=detail, path=path, line=line)


def _refused(path: str, finding: RefusedFinding) -> Finding:
    return Finding(detail=f"{finding.category}: {finding.description}", path=path, line=finding.line)


def _unique(findings: list[Finding]) -> list[Finding]:
    return list(dict.fromkeys(findings))
