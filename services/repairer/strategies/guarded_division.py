"""guarded_division: put a zero guard in front of a function that divides by one of its parameters.

The edit is two inserted lines, right after the docstring (or before the first statement)::

    if <divisor> <= 0:
        return <default>

where <default> matches the declared return type (``0.0`` for ``float``, ``0`` for ``int``; ``0.0`` for
an unannotated function whose division is true division). The source text is edited, not regenerated:
every other byte of the file stays as it was, including its indentation style and line endings.
"""

from __future__ import annotations

import ast

from services.repairer.strategies.outcome import SourceEdit, StrategyRefusal
from services.repairer.strategies.zero_guards import FunctionNode, ParameterDivision, parameter_divisions
from services.repairer.unified_diff import render_unified_diff

STRATEGY = "guarded_division"
DEFAULT_FOR_RETURN_TYPE = {"float": "0.0", "int": "0"}


def guard_division(
    source: str, file: str, function_name: str, divisor: str | None = None
) -> SourceEdit | StrategyRefusal:
    """Guard the first unguarded division by a parameter of ``function_name`` (by ``divisor`` if given)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return _refuse(f"{file} does not parse: {error.msg} (line {error.lineno})")
    function = find_function(tree, function_name)
    if function is None:
        return _refuse(f"no function {function_name!r} in {file}")
    unguarded = [division for division in parameter_divisions(function) if not division.guarded]
    if divisor is not None:
        unguarded = [division for division in unguarded if division.parameter == divisor]
    if not unguarded:
        wanted = f" by {divisor!r}" if divisor else ""
        return _refuse(f"{function_name} in {file} has no unguarded division{wanted} by one of its parameters")
    parameters = {division.parameter for division in unguarded}
    if len(parameters) > 1:
        return _refuse(
            f"{function_name} divides unguarded by several parameters {sorted(parameters)}; one guard cannot cover them"
        )
    target = unguarded[0]
    default = default_return(function, target)
    if default is None:
        return _refuse(f"cannot tell a type-consistent default for {function_name}'s return type")
    placement = guard_placement(source, function)
    if isinstance(placement, str):
        return _refuse(placement)
    after_line, indent, unit, newline = placement
    guard = (f"{indent}if {target.parameter} <= 0:{newline}", f"{indent}{unit}return {default}{newline}")
    lines = source.splitlines(keepends=True)
    new_content = "".join([*lines[:after_line], *guard, *lines[after_line:]])
    if not _guard_covers(new_content, function_name, target.parameter):
        return _refuse(f"the guard would not cover every division by {target.parameter} in {function_name}")
    return SourceEdit(
        strategy=STRATEGY,
        file=file,
        function=function_name,
        inserted_after_line=after_line,
        inserted_lines=tuple(line.rstrip("\r\n") for line in guard),
        new_content=new_content,
        unified_diff=render_unified_diff(file, source, new_content),
        rationale=(
            f"{function_name} divides by its parameter {target.parameter} ({file}:{target.line}) with no "
            f"zero guard; it now returns {default} when {target.parameter} <= 0"
        ),
    )


def find_function(tree: ast.Module, qualified_name: str) -> FunctionNode | None:
    """A function or method by its qualified name (``name``, ``Class.method``, ``outer.inner``)."""
    scope: list[ast.stmt] = tree.body
    found: ast.stmt | None = None
    for part in qualified_name.split("."):
        found = next(
            (
                node
                for node in scope
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == part
            ),
            None,
        )
        if found is None:
            return None
        scope = found.body  # type: ignore[attr-defined]
    return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None


def default_return(function: FunctionNode, division: ParameterDivision) -> str | None:
    annotation = function.returns
    if annotation is None:
        return "0.0" if division.operator == "/" else None
    if isinstance(annotation, ast.Name):
        return DEFAULT_FOR_RETURN_TYPE.get(annotation.id)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return DEFAULT_FOR_RETURN_TYPE.get(annotation.value.strip())
    return None


def guard_placement(source: str, function: FunctionNode) -> tuple[int, str, str, str] | str:
    """(line after which to insert, body indent, one indent unit, newline) or the reason it cannot."""
    lines = source.splitlines(keepends=True)
    body = function.body
    first = body[0]
    has_docstring = (
        isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
    )
    if has_docstring:
        if len(body) < 2:
            return "the function has nothing but a docstring"
        after_line = first.end_lineno or first.lineno
        if body[1].lineno <= after_line:
            return "the docstring shares its last line with the next statement"
    else:
        after_line = first.lineno - 1
        if after_line < function.lineno:
            return "the function body starts on the def line"
    indent = lines[first.lineno - 1][: first.col_offset]
    def_indent = lines[function.lineno - 1][: function.col_offset]
    if indent.strip() or def_indent.strip() or not indent.startswith(def_indent) or indent == def_indent:
        return "the function body does not start on a line of its own"
    newline = "\r\n" if lines[after_line - 1].endswith("\r\n") else "\n"
    return after_line, indent, indent[len(def_indent) :], newline


def _guard_covers(new_content: str, function_name: str, parameter: str) -> bool:
    function = find_function(ast.parse(new_content), function_name)
    if function is None:
        return False
    return all(division.guarded for division in parameter_divisions(function) if division.parameter == parameter)


def _refuse(reason: str) -> StrategyRefusal:
    return StrategyRefusal(strategy=STRATEGY, reason=reason)
