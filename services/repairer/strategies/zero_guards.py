"""Divisions of a function whose divisor is a bare parameter, and whether a zero guard already covers them.

The guard rules are the shared analysis in ``libs.python_source.division_guards`` (enclosing ``if``/
``while``/conditional expression, an earlier leaving ``if`` or ``assert``, an enclosing ``try`` that
catches ``ZeroDivisionError`` or a base class of it). The repairer's own policy is the narrow part: only a
divisor that is one of the function's parameters, as a bare name, is considered. The repairer runs this
check itself so that it does not trust the diagnosis blindly; it never imports another service.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from libs.python_source.division_guards import FunctionNode, divisions, is_zero_guarded, parent_map

__all__ = ["FunctionNode", "ParameterDivision", "parameter_divisions"]


@dataclass(frozen=True)
class ParameterDivision:
    parameter: str
    operator: str
    line: int
    guarded: bool


def parameter_divisions(function: FunctionNode) -> list[ParameterDivision]:
    """Divisions in the function's own body (not nested functions) by one of its parameters, in source order."""
    parameters = {arg.arg for arg in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    parents = parent_map(function)
    return [
        ParameterDivision(
            parameter=division.divisor.id,
            operator=division.operator,
            line=division.line,
            guarded=is_zero_guarded(division.node, {division.divisor.id}, function, parents=parents),
        )
        for division in divisions(function)
        if isinstance(division.divisor, ast.Name) and division.divisor.id in parameters
    ]
