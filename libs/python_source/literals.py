"""Python literals written in the style of the surrounding code."""

from __future__ import annotations

import math
from typing import Any


def literal_like(value: Any, example: str) -> str:
    """Source text for ``value``; a string takes the quote of ``example`` (a string literal of the same file)
    when it can be written plainly with it, a non-finite float is ``float("nan")`` / ``float("inf")``."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    if not isinstance(value, str):
        return repr(value)
    quote = example[:1]
    if quote in ("'", '"') and quote not in value and "\\" not in value and "\n" not in value:
        return f"{quote}{value}{quote}"
    return repr(value)
