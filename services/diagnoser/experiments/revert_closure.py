"""What a revert of the isolated change needs besides it: the candidate may have deleted a module-level name
(an import, a constant, a helper) that the reverted lines use, in another unit that carried none of the drop
(applied alone to the base tree, which still has the name, it changes nothing). Reverting the isolated units
into the candidate then fails with a NameError; this adds the units that define those names back, and again
for what they use, until nothing is missing."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path

from libs.python_source.source_encoding import read_source
from libs.python_source.source_text import python_lines
from libs.python_source.untrusted_parsing import parse_module
from services.diagnoser.experiments.change_units import ChangeUnit

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def revert_closure(units: Sequence[ChangeUnit], minimal: Sequence[int], base: Path, candidate: Path) -> tuple[int, ...]:
    """``minimal`` plus the units whose base lines define a module-level name the reverted code uses and the
    candidate no longer defines."""
    chosen = set(minimal)
    by_id = {unit.id: unit for unit in units}
    for path in sorted({by_id[i].path for i in minimal if by_id[i].path.endswith(".py") and by_id[i].kind == "edit"}):
        base_text, candidate_text = _read(Path(base) / path), _read(Path(candidate) / path)
        if base_text is None or candidate_text is None:
            continue
        kept = _module_names(candidate_text)
        missing = {name: lines for name, lines in _module_names(base_text).items() if name not in kept}
        lines = python_lines(base_text)
        others = [u for u in units if u.path == path and u.kind == "edit" and u.id not in chosen]
        changed = True
        while changed:
            changed = False
            used = {
                name
                for unit in (by_id[i] for i in chosen if by_id[i].path == path)
                for hunk in unit.hunks
                for line in lines[hunk.base_start : hunk.base_end]
                for name in IDENTIFIER.findall(line)
            }
            for unit in list(others):
                if any(_overlaps(unit, missing[name]) for name in used & set(missing)):
                    chosen.add(unit.id)
                    others.remove(unit)
                    changed = True
    return tuple(sorted(chosen))


def _overlaps(unit: ChangeUnit, span: tuple[int, int]) -> bool:
    first, last = span  # 0-based, inclusive
    return any(hunk.base_start <= last and first < max(hunk.base_end, hunk.base_start + 1) for hunk in unit.hunks)


def _module_names(text: str) -> dict[str, tuple[int, int]]:
    """Module-level names and the (0-based, inclusive) lines of the statement that binds each."""
    try:
        module = parse_module(text)
    except SyntaxError:
        return {}
    names: dict[str, tuple[int, int]] = {}
    for node in module.body:
        span = (node.lineno - 1, (node.end_lineno or node.lineno) - 1)
        for name in _bound(node):
            names.setdefault(name, span)
    return names


def _bound(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in node.names]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [target.id for target in targets if isinstance(target, ast.Name)]


def _read(path: Path) -> str | None:
    try:
        return read_source(path).text
    except (OSError, SyntaxError):  # an UnreadableSource is a SyntaxError
        return None
