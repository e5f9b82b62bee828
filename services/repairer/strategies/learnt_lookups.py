"""Where a column's values are looked up in a mapping the object learnt in training.

An encoder that learns its categories keeps them in an attribute (``self.freq_[c] = values.value_counts()``,
``self.rates_ = frame.groupby(col)[label].mean().to_dict()``) and looks the column up there with ``.map``:
``values.map(self.freq_[c])``. A value it never saw maps to nothing, and whatever the code does with that
(``fillna(0.0)``: "rarer than everything") is how an unseen category is scored.

``learnt_lookups`` finds, for a read of the column, each ``R.map(L)`` where ``R`` is the read itself, the read
through value-keeping method calls (``.fillna("missing").astype(str)``, ``.str.strip()``), or a local name the
function binds to one of those once; and ``L`` is an attribute of the method's receiver (or an item of one)
that some method of the class assigns: a learnt mapping, not a method.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from libs.python_source.column_reads import own_nodes
from libs.python_source.definitions import FunctionNode
from services.repairer.strategies.column_access import receiver_name

CHAINED = frozenset({"fillna", "astype", "str", "strip", "lower", "upper", "copy", "replace", "rename", "squeeze"})
"""Methods (and the ``.str`` accessor) a read passes through and still holds the column's values."""


@dataclass(frozen=True)
class LearntLookup:
    receiver: ast.expr
    """What ``.map`` is called on: the column's values."""
    mapping: ast.expr
    """The learnt mapping (``self.freq_[c]``)."""


def learnt_lookups(
    read: ast.expr, function: FunctionNode | None, parents: Mapping[ast.AST, ast.AST]
) -> list[LearntLookup]:
    if function is None:
        return []
    klass = parents.get(function)
    receiver = receiver_name(function, parents)
    if not isinstance(klass, ast.ClassDef) or receiver is None:
        return []
    values = _chain_top(read, parents)
    found = [lookup for lookup in [_mapped(values, parents)] if lookup is not None]
    bound = parents.get(values)
    if isinstance(bound, ast.Assign) and len(bound.targets) == 1 and isinstance(bound.targets[0], ast.Name):
        name = bound.targets[0].id
        if _bound_once(function, name):
            found += [
                lookup
                for node in own_nodes(function)
                if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
                if (lookup := _mapped(node, parents)) is not None
            ]
    return [lookup for lookup in found if _is_learnt(lookup.mapping, receiver, klass, parents)]


def _chain_top(node: ast.expr, parents: Mapping[ast.AST, ast.AST]) -> ast.expr:
    """The read through value-keeping method calls: ``R.fillna("missing").astype(str)``."""
    current = node
    while True:
        attribute = parents.get(current)
        if not (isinstance(attribute, ast.Attribute) and attribute.value is current and attribute.attr in CHAINED):
            return current
        call = parents.get(attribute)
        if isinstance(call, ast.Call) and call.func is attribute:
            current = call
        elif attribute.attr == "str":
            current = attribute
        else:
            return current


def _mapped(values: ast.expr, parents: Mapping[ast.AST, ast.AST]) -> LearntLookup | None:
    attribute = parents.get(values)
    if not (isinstance(attribute, ast.Attribute) and attribute.value is values and attribute.attr == "map"):
        return None
    call = parents.get(attribute)
    if not (isinstance(call, ast.Call) and call.func is attribute and len(call.args) == 1 and not call.keywords):
        return None
    return LearntLookup(values, call.args[0])


def _is_learnt(mapping: ast.expr, receiver: str, klass: ast.ClassDef, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """``self.a`` or ``self.a[...]`` with ``a`` assigned by a method of the class and not a method itself."""
    node = mapping.value if isinstance(mapping, ast.Subscript) else mapping
    if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver):
        return False
    methods = [item for item in klass.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]
    if any(method.name == node.attr for method in methods):
        return False
    return any(_assigns(method, node.attr, parents) for method in methods)


def _assigns(method: FunctionNode, attribute: str, parents: Mapping[ast.AST, ast.AST]) -> bool:
    receiver = receiver_name(method, parents)
    for node in own_nodes(method):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            holder = target.value if isinstance(target, ast.Subscript) else target
            if (
                isinstance(holder, ast.Attribute)
                and holder.attr == attribute
                and isinstance(holder.value, ast.Name)
                and holder.value.id == receiver
            ):
                return True
    return False


def _bound_once(function: FunctionNode, name: str) -> bool:
    stores = [
        node
        for node in own_nodes(function)
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store | ast.Del)
    ]
    return len(stores) == 1
