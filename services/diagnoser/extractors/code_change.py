"""Code change: what the candidate changed against the base, by file and by function (AST), whether each
change is on the feature path, the zero-unguarded divisions it introduced, and the column names the
changed feature code writes or reads."""

from __future__ import annotations

import ast
from pathlib import Path

from libs.canonical_json import is_utf8_text
from services.diagnoser.behavioural_paths import is_test_or_documentation
from services.diagnoser.code_diff import CodeDiff, FunctionChange
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.introduced_divisions import introduced_unguarded_divisions
from services.diagnoser.revision_functions import RevisionFunctions

METHOD = (
    "file-by-file diff of the two trees; Python functions compared by normalised AST dump; divisions without a "
    "zero guard found by AST in changed functions; column names = string constants in subscripts and dict keys "
    "of the changed functions"
)


def code_change_evidence(
    diff: CodeDiff,
    base_dir: Path,
    candidate_dir: Path,
    feature_files: frozenset[str],
    harmless: frozenset[str] = frozenset(),
) -> Evidence:
    """``harmless``: changed files the change isolation measured to carry none of the drop; they are listed,
    not counted as behavioural."""

    def counted(path: str) -> bool:
        return not is_test_or_documentation(path) and path not in harmless

    base_functions, candidate_functions = RevisionFunctions(base_dir), RevisionFunctions(candidate_dir)
    behavioural = [changed for changed in diff.changed_files if counted(changed.path)]
    functions = [change for change in diff.function_changes if counted(change.file)]
    divisions = [
        {
            "file": change.file,
            "function": change.qualified_name,
            "line": site.line,
            "divisor": site.divisor,
            "divisor_parameters": list(site.divisor_parameters),
        }
        for change in functions
        if change.file in feature_files and change.status != "removed"
        for site in introduced_unguarded_divisions(change, base_functions, candidate_functions)
    ]
    feature_changed = [changed.path for changed in behavioural if changed.path in feature_files]
    other_changed = [changed.path for changed in behavioural if changed.path not in feature_files]
    values = {
        "files": [
            {
                "path": changed.path,
                "status": changed.status,
                "added_lines": changed.added_lines,
                "removed_lines": changed.removed_lines,
                "module_level_changed": changed.module_level_changed,
                "on_feature_path": changed.path in feature_files,
            }
            for changed in behavioural
        ],
        "functions": [_function(change, change.file in feature_files) for change in functions],
        "feature_files_changed": feature_changed,
        "other_files_changed": other_changed,
        "ignored_files": [changed.path for changed in diff.changed_files if changed not in behavioural],
        "measured_harmless": sorted(harmless),
        "unguarded_divisions": divisions,
        "columns_in_changed_feature_code": sorted(
            {
                name
                for change in functions
                if change.file in feature_files
                for name in _column_names(candidate_functions, change)
            }
        ),
    }
    summary = (
        f"{len(feature_changed)} feature file(s) changed ({', '.join(feature_changed) or 'none'}), "
        f"{len(other_changed)} other file(s) ({', '.join(other_changed) or 'none'}); "
        f"{len(functions)} function(s) changed, {len(divisions)} unguarded division(s) introduced"
    )
    return make_evidence(
        EvidenceKind.CODE_CHANGE,
        subject="workspace",
        values=values,
        summary=summary if behavioural else "the candidate changes no behavioural file",
        source=EvidenceSource.CODE,
        strength=1.0 if behavioural else 0.0,
        method=METHOD,
    )


def _function(change: FunctionChange, on_feature_path: bool) -> dict[str, object]:
    lines = change.candidate_lines or change.base_lines
    return {
        "file": change.file,
        "function": change.qualified_name,
        "status": change.status,
        "lines": list(lines) if lines else None,
        "on_feature_path": on_feature_path,
    }


def _column_names(candidate: RevisionFunctions, change: FunctionChange) -> set[str]:
    found = candidate.function(change.file, change.qualified_name)
    if found is None:
        return set()
    _, function = found
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and _is_text(node.slice):
            names.add(node.slice.value)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Dict):
            names.update(key.value for key in node.keys if key is not None and _is_text(key))  # type: ignore[attr-defined]
    return names


def _is_text(node: ast.AST) -> bool:
    """A string constant that can name a column: UTF-8 text, as a CSV header is (not ``"\\ud800"``)."""
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and is_utf8_text(node.value)
