"""The value a guarded division returns: the policy's, else the base revision's, else one typed like the
function's declared return.

The base revision's behaviour is read from its own version of the function: an ``if`` testing the divisor
whose block ends in ``return <value>``, or a ``try`` around the division whose ``ZeroDivisionError``
handler ends in ``return <value>``. The value's source text is reused as is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from libs.python_source.definitions import FunctionNode, find_function
from libs.python_source.division_guards import catches_zero_division
from libs.python_source.literals import literal_like
from services.repairer.strategies.base_file import BaseFile

DEFAULT_FOR_RETURN_TYPE = {"float": "0.0", "int": "0"}


@dataclass(frozen=True)
class Fallback:
    text: str
    origin: str
    """"policy", "base revision" or "return type"."""


def choose_fallback(
    function: FunctionNode,
    function_name: str,
    divisors: set[str],
    operators: set[str],
    policy_fallback: float | None,
    base: BaseFile | None,
) -> Fallback | None:
    if policy_fallback is not None:
        return Fallback(literal_like(policy_fallback, ""), "policy")
    if base is not None and (text := base_fallback(base, function_name, divisors)):
        return Fallback(text, "base revision")
    typed = _typed_default(function, operators)
    return Fallback(typed, "return type") if typed is not None else None


def base_fallback(base: BaseFile, function_name: str, divisors: set[str]) -> str | None:
    """What the base revision's ``function_name`` returns when one of ``divisors`` is zero, if it says so."""
    function = find_function(base.tree, function_name) if base.tree is not None else None
    if function is None:
        return None
    text = base.source
    for node in ast.walk(function):
        block: list[ast.stmt] = []
        if isinstance(node, ast.If) and _mentions(node.test, divisors):
            block = node.body
        elif isinstance(node, ast.Try | ast.TryStar) and catches_zero_division(node):
            block = next((handler.body for handler in node.handlers), [])
        if block and isinstance(block[-1], ast.Return) and block[-1].value is not None:
            return text.segment(block[-1].value)
    return None


def _typed_default(function: FunctionNode, operators: set[str]) -> str | None:
    annotation = function.returns
    if annotation is None:
        return "0.0" if operators == {"/"} else None
    if isinstance(annotation, ast.Name):
        return DEFAULT_FOR_RETURN_TYPE.get(annotation.id)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return DEFAULT_FOR_RETURN_TYPE.get(annotation.value.strip())
    return None


def _mentions(expression: ast.expr, names: set[str]) -> bool:
    return any(isinstance(node, ast.Name) and node.id in names for node in ast.walk(expression))
