"""Division sites of a function and whether each divisor is guarded against zero.

Which divisions a function makes and whether a zero guard covers them is the shared analysis in
``libs.python_source.division_guards`` (enclosing ``if``/``while``/conditional expression, an earlier
leaving ``if`` or ``assert``, an enclosing ``try`` that catches ``ZeroDivisionError``). The diagnoser's own
policy on top of it: every name in a divisor expression is checked (a guard on any of them counts), a
divisor with no names is never guarded by context, and a non-zero constant or ``max(..., <positive
constant>)`` divisor is safe by construction. The rule is a heuristic on purpose: it answers "did anyone
think about zero here?", not "can this ever be zero?".
"""

from __future__ import annotations

import ast

from pydantic import BaseModel, ConfigDict

from libs.python_source.division_guards import FunctionNode, divisions, is_zero_guarded, parent_map
from libs.python_source.source_text import SourceText
from services.diagnoser.code_diff import parameter_names


class DivisionSite(BaseModel):
    model_config = ConfigDict(frozen=True)

    function: str
    line: int
    column: int
    operator: str
    divisor: str
    divisor_names: tuple[str, ...]
    divisor_parameters: tuple[str, ...]
    guarded: bool


def division_sites(function: FunctionNode, source: str | None = None) -> list[DivisionSite]:
    """Every division in ``function``'s own body (nested functions are their own functions)."""
    parents = parent_map(function)
    parameters = set(parameter_names(function))
    text = SourceText(source) if source else None
    sites = []
    for division in divisions(function):
        divisor = division.divisor
        names = tuple(sorted({name.id for name in ast.walk(divisor) if isinstance(name, ast.Name)}))
        written = (text.segment(divisor) if text is not None else None) or ast.unparse(divisor)
        guarded = _constant_safe(divisor) or (
            bool(names) and is_zero_guarded(division.node, names, function, parents=parents)
        )
        sites.append(
            DivisionSite(
                function=function.name,
                line=division.line,
                column=division.column,
                operator=division.operator,
                divisor=written,
                divisor_names=names,
                divisor_parameters=tuple(name for name in names if name in parameters),
                guarded=guarded,
            )
        )
    return sites


def unguarded_division_sites(function: FunctionNode, source: str | None = None) -> list[DivisionSite]:
    return [site for site in division_sites(function, source) if not site.guarded]


def _constant_safe(divisor: ast.expr) -> bool:
    if isinstance(divisor, ast.Constant) and isinstance(divisor.value, int | float) and divisor.value != 0:
        return True
    if isinstance(divisor, ast.Call) and isinstance(divisor.func, ast.Name) and divisor.func.id == "max":
        return any(
            isinstance(arg, ast.Constant) and isinstance(arg.value, int | float) and arg.value > 0
            for arg in divisor.args
        )
    return False
