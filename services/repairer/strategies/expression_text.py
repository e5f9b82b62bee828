"""Comparing Python expressions written in different styles: the diagnosis names a divisor by its source text
(``df["lot_sqft"]``), a module may spell it ``df['lot_sqft']`` or across lines."""

from __future__ import annotations

import ast

from libs.python_source.untrusted_parsing import parse_expression


def normalised(expression: str) -> str:
    """An expression's text as ``ast.unparse`` writes it (quotes, spacing), so two spellings compare equal; text
    that is not an expression is compared as it is."""
    try:
        return ast.unparse(parse_expression(expression.strip()))
    except SyntaxError:
        return expression.strip()
