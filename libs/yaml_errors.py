"""A YAML parse error as one readable line that says where: ``file:line:column: problem``."""

from __future__ import annotations

from pathlib import Path

import yaml


def yaml_error_line(path: Path | str, exc: Exception) -> str:
    """``bundle.yaml:2:5: expected ',' or ']', but got '<stream end>'``; without a position (an OS or
    encoding error), the path and the error on one line."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "not YAML"
        if mark is not None:
            return f"{path}:{mark.line + 1}:{mark.column + 1}: not YAML: {problem}"
        return f"{path}: not YAML: {problem}"
    return f"{path}: not readable: {' '.join(str(exc).split())}"
