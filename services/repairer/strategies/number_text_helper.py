"""The helper numeric_coercion adds to a module, and where it goes (before the first top-level definition)."""

from __future__ import annotations

import ast

from libs.python_source.definitions import first_line

HELPER_NAME = "_parse_number_text"
HELPER_LINES = (
    "def _parse_number_text(value: object) -> float:",
    '    """A number written as text ("$1,234.50", "1.234,5", " 12 ") as a float; blank or other text is NaN."""',
    "    if not isinstance(value, str):",
    '        return float("nan") if value is None else float(value)',
    '    text = "".join(char for char in value if char not in " \\u00a0\'_$\\u20ac\\u00a3\\u00a5")',
    '    if "," in text and "." in text:',
    '        decimal = "," if text.rfind(",") > text.rfind(".") else "."',
    '    elif text.count(",") == 1 and len(text) - text.rfind(",") != 4:',
    '        decimal = ","  # "12,5": a decimal comma; "1,234" groups thousands',
    '    elif text.count(".") > 1:',
    '        decimal = ","  # "1.234.567": dots group thousands',
    "    else:",
    '        decimal = "."',
    '    grouping = "." if decimal == "," else ","',
    "    try:",
    '        return float(text.replace(grouping, "").replace(decimal, "."))',
    "    except ValueError:",
    '        return float("nan")',
)


def has_helper(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == HELPER_NAME for node in tree.body)


def helper_insertion_line(tree: ast.Module) -> int | None:
    """The line the helper goes before: the first top-level function or class, with its decorators."""
    definition = next(
        (node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)), None
    )
    return first_line(definition) if definition is not None else None


def helper_text(newline: str) -> str:
    """The helper's lines and the two blank lines that separate it from the next definition."""
    return "".join(f"{line}{newline}" for line in HELPER_LINES) + newline * 2
