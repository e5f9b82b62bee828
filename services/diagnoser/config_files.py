"""Flattened values of structured config files (YAML, JSON, TOML): ``{"a.b.c": value}``."""

from __future__ import annotations

import json
import tomllib
from pathlib import PurePosixPath
from typing import Any

import yaml

CONFIG_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".toml"})


def is_config_file(path: str) -> bool:
    return PurePosixPath(path).suffix in CONFIG_SUFFIXES


def flattened_config(path: str, text: str) -> dict[str, Any]:
    """Leaf values by dotted key; empty when the file does not parse."""
    suffix = PurePosixPath(path).suffix
    try:
        if suffix == ".json":
            document = json.loads(text)
        elif suffix == ".toml":
            document = tomllib.loads(text)
        else:
            document = yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return {}
    flat: dict[str, Any] = {}
    _flatten(document, "", flat)
    return flat


def _flatten(node: Any, prefix: str, flat: dict[str, Any]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _flatten(value, f"{prefix}.{key}" if prefix else str(key), flat)
    elif isinstance(node, list) and any(isinstance(item, dict | list) for item in node):
        for index, value in enumerate(node):
            _flatten(value, f"{prefix}[{index}]", flat)
    else:
        flat[prefix] = node if isinstance(node, str | int | float | bool | list) or node is None else str(node)
