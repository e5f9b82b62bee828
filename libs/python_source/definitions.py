"""Find definitions in a module: functions by qualified name, and module-level literal constants."""

from __future__ import annotations

import ast

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
StringSequence = ast.Tuple | ast.List | ast.Set


def find_function(tree: ast.Module, qualified_name: str) -> FunctionNode | None:
    """A function or method by its qualified name (``name``, ``Class.method``, ``outer.inner``)."""
    found = find_definition(tree, qualified_name)
    return found if isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef) else None


def find_definition(tree: ast.Module, qualified_name: str) -> FunctionNode | ast.ClassDef | None:
    """A function, method or class by its qualified name."""
    scope: list[ast.stmt] = tree.body
    found: FunctionNode | ast.ClassDef | None = None
    for part in qualified_name.split("."):
        found = next(
            (
                node
                for node in scope
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == part
            ),
            None,
        )
        if found is None:
            return None
        scope = found.body
    return found


def first_line(statement: ast.stmt) -> int:
    """The statement's first line, counting the decorators of a function or class."""
    decorators: list[ast.expr] = []
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        decorators = statement.decorator_list
    return min([statement.lineno, *(decorator.lineno for decorator in decorators)])


def docstring_statement(body: list[ast.stmt]) -> ast.Expr | None:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return first
    return None


def string_sequences(tree: ast.Module) -> dict[str, StringSequence]:
    """Module-level names bound once to a tuple, list or set literal of string constants only."""
    return {
        name: value
        for name, value in _module_bindings(tree).items()
        if isinstance(value, ast.Tuple | ast.List | ast.Set) and value.elts and all(_is_text(e) for e in value.elts)
    }


def dict_literals(tree: ast.Module) -> dict[str, ast.Dict]:
    """Module-level names bound once to a dict literal whose keys are all string constants."""
    return {
        name: value
        for name, value in _module_bindings(tree).items()
        if isinstance(value, ast.Dict) and value.keys and all(key is not None and _is_text(key) for key in value.keys)
    }


def string_values(node: ast.expr) -> tuple[str, ...]:
    """The string constants of a tuple/list/set literal, or the keys of a dict literal."""
    items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
    return tuple(item.value for item in items if item is not None and _is_text(item))  # type: ignore[union-attr]


def _module_bindings(tree: ast.Module) -> dict[str, ast.expr]:
    bound: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target, value = statement.targets[0], statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            target, value = statement.target, statement.value
        else:
            continue
        if isinstance(target, ast.Name):
            if target.id in seen:
                bound.pop(target.id, None)
            else:
                bound[target.id] = value
            seen.add(target.id)
    return bound


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)
