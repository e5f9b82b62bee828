"""Comparing Python expressions written in different styles: the diagnosis names a divisor by its source text
(``df["lot_sqft"]``), a module may spell it ``df['lot_sqft']`` or across lines."""

from __future__ import annotations

import ast


def normalised(expression: str) -> str:
    """An expression's text as ``ast.unparse`` writes it (quotes, spacing), so two spellings compare equal; text
    that is not an expression is compared as it is."""
    try:
        return ast.unparse(ast.parse(expression.strip(), mode="eval").body)
    except SyntaxError:
        return expression.strip()
