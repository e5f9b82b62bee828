"""The value code gives a vectorised quotient where the division has no answer, read off the code itself:

- ``(a / b).fillna(v)``, also after methods that keep a missing value missing (``.clip(...)``, ``.round()``,
  ``.abs()``, ``.astype(...)``): ``v``, for every missing quotient;
- ``np.where(cond, a / b, v)`` / ``np.where(cond, v, a / b)``: ``v``.

``base_quotient_fallback`` finds the base revision's version of a candidate's division (the same function, else
any function of the module, dividing by the same divisor once its guard is undone) and reads its value. The
value's source text is reused as is.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from libs.python_source.definitions import find_function
from libs.python_source.division_guards import divisions
from libs.python_source.imports import module_alias
from libs.python_source.source_text import SourceText
from libs.python_source.tree_walk import parents_of
from services.repairer.strategies.base_file import BaseFile
from services.repairer.strategies.expression_text import normalised
from services.repairer.strategies.vector_division_guards import divisor_core

NAN_KEEPING_METHODS = frozenset({"abs", "astype", "clip", "round"})


def filled_value(
    division: ast.BinOp, parents: Mapping[ast.AST, ast.AST], text: SourceText, numpy_alias: str | None
) -> str | None:
    """The source text of the value the code puts in place of a missing quotient of ``division``, if it does."""
    child: ast.expr = division
    while True:
        parent = parents.get(child)
        if isinstance(parent, ast.Attribute) and parent.value is child:
            call = parents.get(parent)
            if not isinstance(call, ast.Call) or call.func is not parent:
                return None
            if parent.attr == "fillna":
                value = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "value"), None)
                return text.segment(value) if value is not None else None
            if parent.attr not in NAN_KEEPING_METHODS:
                return None
            child = call
            continue
        if (
            isinstance(parent, ast.Call)
            and isinstance(parent.func, ast.Attribute)
            and isinstance(parent.func.value, ast.Name)
            and parent.func.value.id == numpy_alias
            and parent.func.attr == "where"
            and len(parent.args) == 3
            and child in parent.args[1:]
        ):
            other = parent.args[2] if parent.args[1] is child else parent.args[1]
            return text.segment(other)
        return None


def base_quotient_fallback(base: BaseFile, function_name: str, divisor: str) -> str | None:
    """What the base revision's version of a division by ``divisor`` (source text, unguarded) gives where it
    has no answer; the same function's divisions are looked at first."""
    tree = base.tree
    if tree is None:
        return None
    wanted = normalised(divisor)
    numpy_alias = module_alias(tree, "numpy")
    text, parents = base.source, parents_of(tree)
    same = find_function(tree, function_name)
    functions = [same] if same is not None else []
    functions += [
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node is not same
    ]
    for function in functions:
        for division in divisions(function):
            node = division.node
            if not isinstance(node, ast.BinOp) or ast.unparse(divisor_core(node.right, numpy_alias)) != wanted:
                continue
            value = filled_value(node, parents, text, numpy_alias)
            if value is not None:
                return value
    return None
