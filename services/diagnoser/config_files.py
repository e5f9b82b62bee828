"""Flattened values of structured config files (YAML, JSON, TOML): ``{"a.b.c": value}``."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import PurePosixPath
from typing import Any

import yaml

CONFIG_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".toml"})


def is_config_file(path: str) -> bool:
    return PurePosixPath(path).suffix in CONFIG_SUFFIXES


MAX_VALUES = 20_000
"""Values a file may hold (leaves, lists and mappings counted alike). YAML's aliases let a few hundred bytes stand for
a billion values; safe_load shares them, a walk would not."""
MAX_DEPTH = 64
"""Levels of nesting a file may have."""


def flattened_config(path: str, text: str) -> dict[str, Any]:
    """Leaf values by dotted key; empty when the file does not parse, or holds more than ``MAX_VALUES`` values or
    more than ``MAX_DEPTH`` levels. A number JSON cannot carry (YAML's .inf, JSON's NaN, TOML's inf) is its text."""
    suffix = PurePosixPath(path).suffix
    try:
        if suffix == ".json":
            document = json.loads(text)
        elif suffix == ".toml":
            document = tomllib.loads(text)
        else:
            document = yaml.safe_load(text)
    except (ValueError, yaml.YAMLError, RecursionError, MemoryError):  # nesting past the parser's own limit
        return {}
    return _flattened(document) or {}


def _flattened(document: Any) -> dict[str, Any] | None:
    """The leaves of ``document`` in the order a depth-first walk meets them; None past the limits."""
    flat: dict[str, Any] = {}
    pending: list[tuple[Any, str, int]] = [(document, "", 1)]
    visited = 0
    while pending:
        node, prefix, depth = pending.pop()
        visited += 1
        if visited > MAX_VALUES or depth > MAX_DEPTH:
            return None
        if isinstance(node, dict):
            children = [(value, f"{prefix}.{key}" if prefix else str(key)) for key, value in node.items()]
        elif isinstance(node, list) and any(isinstance(item, dict | list) for item in node):
            children = [(value, f"{prefix}[{index}]") for index, value in enumerate(node)]
        else:
            flat[prefix] = _leaf(node)
            continue
        pending.extend((value, key, depth + 1) for value, key in reversed(children))
    return flat


def _leaf(node: Any) -> Any:
    if isinstance(node, float) and not math.isfinite(node):
        return repr(node)  # "inf", "-inf", "nan": canonical JSON, and so the evidence, cannot hold the number
    if isinstance(node, list):  # of scalars only: a list holding a list or a mapping is walked
        return [_leaf(item) for item in node]
    return node if isinstance(node, str | int | float | bool) or node is None else str(node)
