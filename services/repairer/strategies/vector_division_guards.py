"""Whether a vectorised division is guarded within its own expression, the way pandas and numpy code guards
one (an ``if`` cannot test a whole Series):

- the divisor: ``b.where(b > 0)``, ``b.mask(b == 0)``, ``b.replace(0, np.nan)``, ``b.clip(lower=1)``,
  ``np.where(b > 0, b, np.nan)``, ``np.maximum(b, 1)``, ``np.clip(b, 1, None)``, ``max(b, 1)``;
- the quotient: ``(a / b).where(b > 0, 0.0)``, ``.mask(...)``, ``.replace([np.inf, -np.inf], ...)``, in
  ``np.where(b > 0, a / b, 0.0)`` or ``np.nan_to_num(a / b)``.

``divisor_core`` undoes the divisor's guard (``b.replace(0, np.nan)`` is ``b``), so a division of the base
revision can be matched with the candidate's.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

DIVISOR_GUARD_METHODS = frozenset({"where", "mask", "replace", "clip"})
DIVISOR_GUARD_FUNCTIONS = frozenset({"where", "maximum", "clip"})
QUOTIENT_GUARD_METHODS = frozenset({"where", "mask", "replace"})
QUOTIENT_GUARD_FUNCTIONS = frozenset({"where", "nan_to_num"})


def guarded_divisor(divisor: ast.expr, numpy_alias: str | None) -> bool:
    return divisor_core(divisor, numpy_alias) is not divisor


def divisor_core(divisor: ast.expr, numpy_alias: str | None) -> ast.expr:
    """The value a guarded divisor guards (``b`` of ``b.where(b > 0)``), or the divisor itself."""
    if not isinstance(divisor, ast.Call):
        return divisor
    called = divisor.func
    if isinstance(called, ast.Name) and called.id == "max" and divisor.args:
        return divisor.args[0]
    if not isinstance(called, ast.Attribute):
        return divisor
    if _is_module(called.value, numpy_alias):
        if called.attr == "where" and len(divisor.args) >= 2:
            return divisor.args[1]
        if called.attr in DIVISOR_GUARD_FUNCTIONS and divisor.args:
            return divisor.args[0]
        return divisor
    return called.value if called.attr in DIVISOR_GUARD_METHODS else divisor


def guarded_quotient(division: ast.BinOp, parents: Mapping[ast.AST, ast.AST], numpy_alias: str | None) -> bool:
    parent = parents.get(division)
    if isinstance(parent, ast.Attribute) and parent.value is division and parent.attr in QUOTIENT_GUARD_METHODS:
        return isinstance(parents.get(parent), ast.Call)
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and _is_module(parent.func.value, numpy_alias)
        and parent.func.attr in QUOTIENT_GUARD_FUNCTIONS
        and division in parent.args
    )


def _is_module(node: ast.expr, alias: str | None) -> bool:
    return alias is not None and isinstance(node, ast.Name) and node.id == alias
