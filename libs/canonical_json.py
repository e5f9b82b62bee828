"""Canonical JSON: the one byte form of a document that is hashed and signed."""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any


def canonical_bytes(document: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8, and no NaN or Infinity (they are not JSON)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


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
    """Parse JSON, refusing NaN and Infinity, which Python's json accepts by default, and numbers too large for a
    float, which it reads as infinity."""
    return json.loads(data, parse_constant=_reject_constant, parse_float=_finite_float)
