"""Where two JSON documents differ, as paths (`validation.checks[2].values.duration_s`): what a rerun reports."""

from __future__ import annotations

from typing import Any


def differing_paths(logged: Any, rerun: Any, path: str = "", limit: int = 5) -> list[str]:
    """The first `limit` paths whose values differ, depth first in key order."""
    found: list[str] = []
    _walk(logged, rerun, path, found, limit)
    return found


def _walk(a: Any, b: Any, path: str, found: list[str], limit: int) -> None:
    if len(found) >= limit:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            _walk(a.get(key, _MISSING), b.get(key, _MISSING), f"{path}.{key}" if path else str(key), found, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            _walk(x, y, f"{path}[{index}]", found, limit)
    elif a != b or type(a) is not type(b):
        found.append(path or "(payload)")


_MISSING = object()
