"""The literal values a Python module sets: module-level constants, keyword arguments of calls and entries
of dict literals, each under a stable key (where it is, not which line), so two revisions can be compared."""

from __future__ import annotations

import ast
import math
from collections import Counter
from typing import Any

from libs.canonical_json import is_utf8_text
from libs.python_source.untrusted_parsing import parse_module

LiteralValue = Any


def literal_sites(source: str) -> dict[str, LiteralValue]:
    """``{"<scope>:<what>": value}`` for every literal the module sets; empty when it does not parse."""
    try:
        tree = parse_module(source)
    except SyntaxError:
        return {}
    sites: dict[str, LiteralValue] = {}
    _visit(tree, "<module>", sites, Counter())
    return sites


def _visit(node: ast.AST, scope: str, sites: dict[str, LiteralValue], seen: Counter[str]) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = child.name if scope == "<module>" else f"{scope}.{child.name}"
            _visit(child, inner, sites, Counter())
            continue
        if isinstance(child, ast.Assign | ast.AnnAssign) and scope == "<module>":
            _constant(child, sites)
        elif isinstance(child, ast.Call):
            name = _call_name(child.func)
            for keyword in child.keywords:
                value = _literal(keyword.value)
                if keyword.arg is not None and value is not _NOT_LITERAL:
                    _put(sites, seen, f"{scope}:{name}({keyword.arg}=)", value)
        elif isinstance(child, ast.Dict):
            for key, value_node in zip(child.keys, child.values, strict=True):
                value = _literal(value_node)
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and value is not _NOT_LITERAL:
                    _put(sites, seen, f"{scope}:{{{key.value!r}}}", value)
        _visit(child, scope, sites, seen)


def _constant(node: ast.Assign | ast.AnnAssign, sites: dict[str, LiteralValue]) -> None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    value = _literal(node.value) if node.value is not None else _NOT_LITERAL
    if value is _NOT_LITERAL:
        return
    for target in targets:
        if isinstance(target, ast.Name):
            sites[f"<module>:{target.id}"] = value


def _put(sites: dict[str, LiteralValue], seen: Counter[str], key: str, value: LiteralValue) -> None:
    seen[key] += 1
    sites[key if seen[key] == 1 else f"{key}#{seen[key]}"] = value


def _call_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return "<call>"


class _NotLiteral:
    pass


_NOT_LITERAL = _NotLiteral()


def _literal(node: ast.expr | None) -> LiteralValue:
    if node is None:
        return _NOT_LITERAL
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOT_LITERAL
    return _jsonable(value)


def _jsonable(value: LiteralValue) -> LiteralValue:
    if isinstance(value, tuple | list | set | frozenset):
        items = [_jsonable(item) for item in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if isinstance(value, dict):
        return {_text(str(key)): _jsonable(item) for key, item in value.items()}
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, bytes | complex):
        return repr(value)
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # 1e999 is a literal: "inf", which canonical JSON, and so the evidence, can hold
    return value


def _text(value: str) -> str:
    """The string, or its ``repr`` when it has no UTF-8 form (a lone surrogate: ``"\\ud800"``)."""
    return value if is_utf8_text(value) else repr(value)
