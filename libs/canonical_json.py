"""Canonical JSON: the one byte form of a document that is hashed and signed."""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import orjson


def canonical_bytes(document: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8, and no NaN or Infinity (they are not JSON)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


_ONE_DIGIT_EXPONENT = re.compile(rb"e-[0-9](?![0-9])")
"""Where orjson writes a float otherwise than Python's json: with a one-digit negative exponent (`2.5e-7` for
`2.5e-07`), and in fixed notation below 1e-4 (`0.00001` for `1e-05`, always with `0.0000` in it). Every other finite
float, every integer and every string both write alike (`tests/unit/events/test_canonical_form_check.py` compares
them)."""


def is_canonical_bytes(document: Any, data: bytes) -> bool:
    """`canonical_bytes(document) == data`, raising what `canonical_bytes` raises: the check that a signed payload
    is the canonical form of the event read from it.

    orjson writes the same bytes about ten times faster, so it answers first. It says yes only when its bytes are
    `data`, `data` holds none of the floats it writes otherwise (`_ONE_DIGIT_EXPONENT`, `0.0000`), and `data` reads
    back as `document` (orjson writes infinity and NaN as null, which reads back as None). Anything else is answered
    by `canonical_bytes` itself."""
    try:
        written = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
        if (
            written == data
            and b"0.0000" not in data
            and _ONE_DIGIT_EXPONENT.search(data) is None
            and orjson.loads(data) == document
        ):
            return True
    except (orjson.JSONEncodeError, orjson.JSONDecodeError):
        pass  # beyond orjson (an integer over 64 bits, a lone surrogate, a key that is not text): the definition
    return canonical_bytes(document) == data


def is_utf8_text(text: str) -> bool:
    """Whether ``canonical_bytes`` can write ``text``: a str holding a lone surrogate (``"\\ud800"`` is a valid Python
    literal) has no UTF-8 form."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e999: Python's json reads it as infinity, which canonical JSON cannot write again
        raise ValueError(f"{text[:40]} is too large for a float")
    return value


def strict_loads(data: bytes | str) -> Any:
    """Parse JSON, refusing NaN and Infinity, which Python's json accepts by default, numbers too large for a
    float, which it reads as infinity, and nesting deeper than the parser's recursion can go."""
    try:
        return json.loads(data, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:  # the parser recurses per level: bytes from outside must not crash their reader
        raise ValueError("not valid JSON here: nested too deeply to read") from None
