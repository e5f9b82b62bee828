"""guarded_division: guard the divisions a function makes, by a number or by a vectorised value.

A division by a pandas Series or frame or a numpy array (``operand_kinds``: a frame column, a Series local, a
helper's parameter the module passes Series to) is guarded in its own expression (``vectorised_division``):
``a / b.where(b > 0)`` when the code or the base revision fills the missing quotient, else
``(a / b).mask(b <= 0, <fallback>)``, ``np.where(b <= 0, <fallback>, a) / np.where(b <= 0, 1, b)`` for arrays.
There the fallback is the code's own ``fillna``, else the base revision's, else the policy's, else 0.0.

A division by a bare name holding a number gets an ``if``. For divisors that are parameters the edit is two
inserted lines, right after the docstring (or before the first statement)::

    if <divisor> <= 0:            # several divisors: "if a <= 0 or b <= 0:"
        return <fallback>

For a divisor that is a local, the same two lines go right before the statement of the function's body
that divides by it. Which denominators are guarded (zero, negative, null, NaN) is the policy's
``repair.division.denominators``; the fallback is the policy's, else what the base revision returned for
them, else a value of the declared return type. Only divisions the candidate introduced are guarded: a
division the base revision made unguarded too is not this change's fault. The source text is edited, not
regenerated: every other byte stays, including indentation style and line endings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from contracts.catalogue import RepairStrategy, answers
from libs.policy.repair import DivisionPolicy
from libs.python_source.definitions import find_function
from libs.python_source.imports import module_alias
from libs.python_source.source_text import Replacement, SourceText, apply_replacements
from libs.python_source.untrusted_parsing import parse_module
from services.repairer.repair_context import RepairContext
from services.repairer.strategies.base_file import BaseFile
from services.repairer.strategies.body_start import body_start, indent_unit, statement_indent
from services.repairer.strategies.division_fallback import choose_fallback
from services.repairer.strategies.outcome import FileEdit, MultiFileEdit, StrategyRefusal, multi_file_edit
from services.repairer.strategies.vectorised_division import VectorDivision, guard_vectorised, vectorised_divisions
from services.repairer.strategies.zero_guards import FunctionNode, NameDivision, name_divisions

STRATEGY = RepairStrategy.GUARDED_DIVISION
ANSWERS = answers(STRATEGY)
NEEDS = ("suspect",)

COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, ast.Match)


@dataclass(frozen=True)
class _Guard:
    before_line: int
    """1-based line the guard is inserted before."""
    indent: str
    divisors: tuple[str, ...]


def propose(context: RepairContext) -> MultiFileEdit | StrategyRefusal:
    suspect = context.suspect
    assert suspect is not None
    source = context.candidate.read(suspect.file)
    if source is None:
        reason = context.candidate.unreadable_reason(suspect.file)
        return _refuse(f"{suspect.file} is not a readable file of the candidate revision: {reason}")
    base_source = context.base.read(suspect.file) if context.base is not None else None
    return guard_division(
        source, suspect.file, suspect.function, suspect.divisor, policy=context.division, base_source=base_source
    )


def guard_division(
    source: str,
    file: str,
    function_name: str,
    divisor: str | None = None,
    *,
    policy: DivisionPolicy | None = None,
    base_source: str | None = None,
) -> MultiFileEdit | StrategyRefusal:
    """Guard every unguarded division of ``function_name`` by a parameter or local (only ``divisor`` if given)."""
    policy = policy or DivisionPolicy()
    base = BaseFile(base_source) if base_source is not None else None  # parsed once, if asked at all
    try:
        tree = parse_module(source)
    except SyntaxError as error:
        return _refuse(f"{file} does not parse: {error.msg} (line {error.lineno})")
    function = find_function(tree, function_name)
    if function is None:
        return _refuse(f"no function {function_name!r} in {file}")
    vectorised = vectorised_divisions(tree, function_name, divisor)
    if vectorised:
        return _guard_vectorised(source, tree, file, function_name, vectorised, policy, base)
    targets = _unguarded(function, divisor)
    if not targets:
        wanted = f" by {divisor!r}" if divisor else ""
        return _refuse(f"{function_name} in {file} has no unguarded division{wanted} by a parameter or local")
    if base is not None:
        inherited = _unguarded_in_base(base, function_name)
        targets = [target for target in targets if target.divisor not in inherited]
        if not targets:
            return _refuse(f"the base revision's {function_name} divides unguarded by the same names: not introduced")
    if not policy.denominators:
        return _refuse("the policy guards no denominator")
    divisors = {target.divisor for target in targets}
    fallback = choose_fallback(function, function_name, divisors, {t.operator for t in targets}, policy.fallback, base)
    if fallback is None:
        return _refuse(f"cannot tell a type-consistent fallback for {function_name}'s return type")
    text = SourceText(source)
    guards = _guards(text, function, targets)
    if isinstance(guards, str):
        return _refuse(guards)
    math_name = module_alias(tree, "math")
    new_content = _insert(text, guards, policy, math_name, fallback.text, indent_unit(text, function))
    if not _covers(new_content, function_name, divisors):
        return _refuse(f"the guard would not cover every division by {sorted(divisors)} in {function_name}")
    names = ", ".join(sorted(divisors))
    return multi_file_edit(
        STRATEGY,
        [FileEdit(path=file, old_text=source, new_text=new_content)],
        rationale=(
            f"{function_name} ({file}) divides by {names} with no guard; it now returns {fallback.text} "
            f"(from the {fallback.origin}) for {' or '.join(sorted(policy.denominators))} denominators"
        ),
        function=function_name,
    )


def _guard_vectorised(
    source: str,
    tree: ast.Module,
    file: str,
    function_name: str,
    targets: list[VectorDivision],
    policy: DivisionPolicy,
    base: BaseFile | None,
) -> MultiFileEdit | StrategyRefusal:
    if base is not None:
        inherited = _vectorised_in_base(base, function_name)
        targets = [target for target in targets if ast.unparse(target.divisor) not in inherited]
        if not targets:
            return _refuse(f"the base revision's {function_name} divides unguarded by the same values: not introduced")
    guarded = guard_vectorised(source, tree, function_name, targets, policy, base)
    if isinstance(guarded, str):
        return _refuse(guarded)
    try:
        still = vectorised_divisions(parse_module(guarded.new_source), function_name, None)
    except SyntaxError:
        return _refuse(f"the guarded {function_name} would not parse")
    if any(ast.unparse(left.divisor) == ast.unparse(target.divisor) for left in still for target in targets):
        return _refuse(f"the guard would not cover every vectorised division of {function_name}")
    bounds = " or ".join(sorted(policy.denominators))
    return multi_file_edit(
        STRATEGY,
        [FileEdit(path=file, old_text=source, new_text=guarded.new_source)],
        rationale=(
            f"{function_name} ({file}) divides vectorised values with no guard; where the denominator is {bounds} "
            f"the quotient is now the fallback, element by element ({'; '.join(guarded.described)})"
        ),
        function=function_name,
    )


def _vectorised_in_base(base: BaseFile, function_name: str) -> set[str]:
    if base.tree is None:
        return set()
    return {ast.unparse(target.divisor) for target in vectorised_divisions(base.tree, function_name, None)}


def _unguarded(function: FunctionNode, divisor: str | None) -> list[NameDivision]:
    assigned = {
        node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
    }
    return [
        division
        for division in name_divisions(function)
        if not division.guarded
        and (division.is_parameter or division.divisor in assigned)
        and (divisor is None or division.divisor == divisor)
    ]


def _unguarded_in_base(base: BaseFile, function_name: str) -> set[str]:
    function = find_function(base.tree, function_name) if base.tree is not None else None
    return {d.divisor for d in name_divisions(function) if not d.guarded} if function is not None else set()


def _guards(text: SourceText, function: FunctionNode, targets: list[NameDivision]) -> list[_Guard] | str:
    by_line: dict[int, list[str]] = {}
    indents: dict[int, str] = {}
    for target in targets:
        placement = body_start(text, function) if target.is_parameter else _local_placement(text, function, target)
        if isinstance(placement, str):
            return placement
        line, indent = placement
        indents[line] = indent
        names = by_line.setdefault(line, [])
        if target.divisor not in names:
            names.append(target.divisor)
    return [_Guard(line, indents[line], tuple(names)) for line, names in sorted(by_line.items())]


def _local_placement(text: SourceText, function: FunctionNode, target: NameDivision) -> tuple[int, str] | str:
    statement = target.statement
    if isinstance(statement, COMPOUND):
        return f"the division by the local {target.divisor} is inside a block; one guard cannot cover it"
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and node.id == target.divisor and isinstance(node.ctx, ast.Store):
            return f"{target.divisor} is assigned in the statement that divides by it"
    return statement_indent(text, function, statement, statement.lineno)


def _insert(
    text: SourceText, guards: list[_Guard], policy: DivisionPolicy, math_name: str | None, fallback: str, unit: str
) -> str:
    newline = text.newline
    insertions = []
    for guard in guards:
        condition = " or ".join(_condition(name, policy, math_name) for name in guard.divisors)
        block = f"{guard.indent}if {condition}:{newline}{guard.indent}{unit}return {fallback}{newline}"
        point = text.line_start(guard.before_line)
        insertions.append(Replacement(point, point, block))
    return apply_replacements(text.source, insertions)


def _condition(name: str, policy: DivisionPolicy, math_name: str | None) -> str:
    wanted = policy.denominators
    parts = []
    if "null" in wanted:
        parts.append(f"{name} is None")
    if "nan" in wanted:
        parts.append(f"{math_name}.isnan({name})" if math_name else f"{name} != {name}")
    if {"zero", "negative"} <= wanted:
        parts.append(f"{name} <= 0")
    elif "zero" in wanted:
        parts.append(f"{name} == 0")
    elif "negative" in wanted:
        parts.append(f"{name} < 0")
    return " or ".join(parts)


def _covers(new_content: str, function_name: str, divisors: set[str]) -> bool:
    function = find_function(parse_module(new_content), function_name)
    if function is None:
        return False
    return all(division.guarded for division in name_divisions(function) if division.divisor in divisors)


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
