"""The zero-unguarded divisions a changed function introduced: unguarded in the candidate's version of the
function and not already unguarded (same operator, same divisor) in the base's."""

from __future__ import annotations

from pathlib import Path

from libs.python_source.untrusted_parsing import parse_module
from services.diagnoser.code_diff import FunctionChange, find_function
from services.diagnoser.division_sites import DivisionSite, unguarded_division_sites


def introduced_unguarded_divisions(change: FunctionChange, base_dir: Path, candidate_dir: Path) -> list[DivisionSite]:
    """Unguarded divisions of the candidate function that the base version did not have unguarded."""
    candidate_sites = _unguarded_sites(candidate_dir / change.file, change.qualified_name)
    base_sites = _unguarded_sites(base_dir / change.file, change.qualified_name)
    already_unguarded = {(site.operator, site.divisor) for site in base_sites}
    return [site for site in candidate_sites if (site.operator, site.divisor) not in already_unguarded]


def _unguarded_sites(path: Path, qualified_name: str) -> list[DivisionSite]:
    if not path.is_file():
        return []
    try:
        source = path.read_text(encoding="utf-8")
        tree = parse_module(source)
    except (OSError, UnicodeDecodeError, SyntaxError):
        return []
    function = find_function(tree, qualified_name)
    return unguarded_division_sites(function, source) if function is not None else []
