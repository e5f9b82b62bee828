"""The catalogue a module encodes a categorical column against: ``OneHotEncoder(categories=[REGIONS, PLANS])``
(or ``OrdinalEncoder``) in a column transformer entry routing ``["region", "plan"]`` encodes ``plan`` against
``PLANS``: the item of ``categories`` at the column's position. The encoder may be the entry's transformer,
a step of a pipeline there, or a name bound to either (``column_transformers.ColumnTransformers.reachable``).
An encoder that learns its categories (``categories="auto"``, the default) has no catalogue."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from services.repairer.strategies.column_names import ColumnNames
from services.repairer.strategies.column_transformers import ColumnTransformers, called_name

ENCODERS = frozenset({"OneHotEncoder", "OrdinalEncoder"})


@dataclass(frozen=True)
class Catalogue:
    node: ast.expr
    """The catalogue expression as the module writes it (``PLANS``, ``self.plans``, a list literal)."""
    values: tuple[str, ...]


def encoder_catalogue(transformers: ColumnTransformers, names: ColumnNames, column: str) -> Catalogue | None:
    """The first catalogue (in source order) the module's encoders hold for ``column``; None without one."""
    found: list[Catalogue] = []
    for routed in transformers.routed:
        if column not in routed.columns:
            continue
        position = routed.columns.index(column)
        for node in transformers.reachable(routed.transformer):
            if not (isinstance(node, ast.Call) and called_name(node.func) in ENCODERS):
                continue
            categories = next((keyword.value for keyword in node.keywords if keyword.arg == "categories"), None)
            if not isinstance(categories, ast.List | ast.Tuple) or len(categories.elts) != len(routed.columns):
                continue
            item = categories.elts[position]
            values = names.column_list(item)
            if values is not None:
                found.append(Catalogue(item, values))
    found.sort(key=lambda catalogue: (catalogue.node.lineno, catalogue.node.col_offset))
    return found[0] if found else None
