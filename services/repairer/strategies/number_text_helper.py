"""The helpers numeric_coercion adds to a module, and where they go (before the first top-level definition).

- ``_parse_number_text(value)``: a number written as text as a float, blank or other text as NaN. For
  conversions that have no fallback of their own (``.map(...)`` before ``pd.to_numeric`` / ``.astype``, a bare
  ``float(row["c"])``).
- ``_number_text(value)``: formatted number text as the plain text ``float()`` reads; a value that is not
  text is returned unchanged, text that is not a number stays text that is not one. For a conversion inside
  a ``try`` that catches ``ValueError``: formatted numbers now parse, and what still is not a number (blank,
  "n/a") still raises, so the module's own fallback decides what it becomes.

Both read currency signs and codes ("$", "USD 845.00", "845.00 EUR"), spaces, apostrophes and underscores
as grouping, and "1.234,5" and "1,234.5" both as 1234.5 (a lone "1,234" groups thousands).
"""

from __future__ import annotations

import ast

from libs.python_source.definitions import first_line

CURRENCY_CODE = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
HELPER_NAME = "_parse_number_text"
TEXT_HELPER_NAME = "_number_text"
_NORMALISE = (
    f'    text = "".join(char for char in value.strip().strip("{CURRENCY_CODE}") '
    'if char not in " \\u00a0\'_$\\u20ac\\u00a3\\u00a5")',
    '    if "," in text and "." in text:',
    '        decimal = "," if text.rfind(",") > text.rfind(".") else "."',
    '    elif text.count(",") == 1 and len(text) - text.rfind(",") != 4:',
    '        decimal = ","  # "12,5": a decimal comma; "1,234" groups thousands',
    '    elif text.count(".") > 1:',
    '        decimal = ","  # "1.234.567": dots group thousands',
    "    else:",
    '        decimal = "."',
    '    grouping = "." if decimal == "," else ","',
)
HELPER_LINES = (
    "def _parse_number_text(value: object) -> float:",
    '    """A number written as text ("$1,234.50", "USD 845", "1.234,5", " 12 ") as a float; blank or other text is'
    ' NaN."""',
    "    if not isinstance(value, str):",
    '        return float("nan") if value is None else float(value)',
    *_NORMALISE,
    "    try:",
    '        return float(text.replace(grouping, "").replace(decimal, "."))',
    "    except ValueError:",
    '        return float("nan")',
)
TEXT_HELPER_LINES = (
    "def _number_text(value: object) -> object:",
    '    """Number text as float() reads it ("$1,234.50", "USD 845", "1.234,5" -> "1234.50", "845", "1234.5");'
    ' other text stays as it is."""',
    "    if not isinstance(value, str):",
    "        return value",
    *_NORMALISE,
    '    return text.replace(grouping, "").replace(decimal, ".")',
)
HELPERS = {HELPER_NAME: HELPER_LINES, TEXT_HELPER_NAME: TEXT_HELPER_LINES}


def has_helper(tree: ast.Module, name: str = HELPER_NAME) -> bool:
    return any(isinstance(node, ast.FunctionDef) and node.name == name for node in tree.body)


def helper_insertion_line(tree: ast.Module) -> int | None:
    """The line the helper goes before: the first top-level function or class, with its decorators."""
    definition = next(
        (node for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)), None
    )
    return first_line(definition) if definition is not None else None


def helper_text(newline: str, name: str = HELPER_NAME) -> str:
    """The helper's lines and the two blank lines that separate it from the next definition."""
    return "".join(f"{line}{newline}" for line in HELPERS[name]) + newline * 2
