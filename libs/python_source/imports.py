"""What a module imports at its top level."""

from __future__ import annotations

import ast


def module_alias(tree: ast.Module, module: str) -> str | None:
    """The name a top-level ``import <module>`` / ``import <module> as x`` binds, or None."""
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.name == module:
                    return alias.asname or module
    return None
