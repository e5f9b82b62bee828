"""Evidence from the code change: changed functions, divisions they introduced, the scope of the change."""

from __future__ import annotations

import ast
from pathlib import Path, PurePosixPath

from services.diagnoser.code_diff import CodeDiff, FunctionChange, find_function
from services.diagnoser.division_sites import DivisionSite, unguarded_division_sites
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence

NON_BEHAVIOURAL_SUFFIXES = frozenset({".md", ".rst", ".txt"})


def code_change_evidence(
    diff: CodeDiff, base_dir: Path, candidate_dir: Path, feature_files: frozenset[str]
) -> list[Evidence]:
    """One item per changed function, per newly unguarded division, and one for the scope of the change."""
    evidence: list[Evidence] = []
    for change in diff.function_changes:
        on_feature_path = change.file in feature_files
        evidence.append(_function_changed(change, on_feature_path))
        if change.status != "removed":
            for site in introduced_unguarded_divisions(change, base_dir, candidate_dir):
                evidence.append(_unguarded_division(change, site, on_feature_path))
    evidence.append(_change_scope(diff, feature_files))
    return evidence


def introduced_unguarded_divisions(change: FunctionChange, base_dir: Path, candidate_dir: Path) -> list[DivisionSite]:
    """Unguarded divisions of the candidate function that the base version did not have unguarded."""
    candidate_sites = _unguarded_sites(candidate_dir / change.file, change.qualified_name)
    base_sites = _unguarded_sites(base_dir / change.file, change.qualified_name)
    already_unguarded = {(site.operator, site.divisor) for site in base_sites}
    return [site for site in candidate_sites if (site.operator, site.divisor) not in already_unguarded]


def is_test_or_documentation(path: str) -> bool:
    pure = PurePosixPath(path)
    return (
        pure.suffix in NON_BEHAVIOURAL_SUFFIXES
        or "tests" in pure.parts[:-1]
        or pure.name.startswith("test_")
        or pure.name == "conftest.py"
    )


def _unguarded_sites(path: Path, qualified_name: str) -> list[DivisionSite]:
    if not path.is_file():
        return []
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    function = find_function(tree, qualified_name)
    return unguarded_division_sites(function, source) if function is not None else []


def _function_changed(change: FunctionChange, on_feature_path: bool) -> Evidence:
    lines = change.candidate_lines or change.base_lines
    where = "on the feature path" if on_feature_path else "off the feature path"
    return make_evidence(
        EvidenceKind.FUNCTION_CHANGED,
        subject=f"{change.file}::{change.qualified_name}",
        values={
            "file": change.file,
            "function": change.qualified_name,
            "status": change.status,
            "lines": list(lines) if lines else None,
            "parameters": list(change.parameters),
            "on_feature_path": on_feature_path,
        },
        summary=f"function {change.qualified_name} in {change.file} was {change.status} ({where})",
        source=EvidenceSource.CODE,
    )


def _unguarded_division(change: FunctionChange, site: DivisionSite, on_feature_path: bool) -> Evidence:
    return make_evidence(
        EvidenceKind.UNGUARDED_DIVISION,
        subject=f"{change.file}::{change.qualified_name}",
        values={
            "file": change.file,
            "function": change.qualified_name,
            "line": site.line,
            "function_lines": list(change.candidate_lines) if change.candidate_lines else None,
            "operator": site.operator,
            "divisor": site.divisor,
            "divisor_parameters": list(site.divisor_parameters),
            "introduced": True,
            "on_feature_path": on_feature_path,
        },
        summary=(
            f"{change.qualified_name} divides by {site.divisor} at {change.file}:{site.line} "
            "with no zero guard; the base version had no such unguarded division"
        ),
        source=EvidenceSource.CODE,
    )


def _change_scope(diff: CodeDiff, feature_files: frozenset[str]) -> Evidence:
    changed = diff.changed_paths()
    on_path = [path for path in changed if path in feature_files]
    off_path = [path for path in changed if path not in feature_files]
    behavioural = [path for path in off_path if not is_test_or_documentation(path)]
    return make_evidence(
        EvidenceKind.CODE_CHANGE_SCOPE,
        subject="workspace",
        values={
            "feature_path_files": on_path,
            "feature_path_count": len(on_path),
            "other_files": behavioural,
            "other_count": len(behavioural),
            "ignored_test_or_documentation_files": [path for path in off_path if path not in behavioural],
        },
        summary=(
            f"{len(on_path)} changed file(s) on the feature path ({', '.join(on_path) or 'none'}); "
            f"{len(behavioural)} behavioural file(s) changed elsewhere ({', '.join(behavioural) or 'none'})"
        ),
        source=EvidenceSource.CODE,
    )
