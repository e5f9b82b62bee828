"""Strict JSON parsing for untrusted MCL input: NaN, Infinity and numbers too large for a float (1e999) are
refused, and every failure is typed.

Same rule as :func:`libs.canonical_json.strict_loads`, with the refusal raised as its own exception so
that it gets its own reason (``non_finite_number``) instead of being confused with other ValueErrors
(over-long integers, bad encodings).
"""

from __future__ import annotations

import json
import math
from typing import Any

from libs.datahub.mcl.decode_error import DecodeFailure, MclDecodeError, describe_exception


class _NonFiniteNumber(ValueError):
    pass


def _refuse_constant(name: str) -> Any:
    raise _NonFiniteNumber(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent; one too large for a float (1e999) would read as infinity, which
    no canonical JSON can carry on: refused like Infinity."""
    value = float(text)
    if math.isinf(value):
        raise _NonFiniteNumber(f"{text[:40]} is too large for a float")
    return value


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float)
"""Made once: ``json.loads(text, parse_constant=...)`` builds a decoder per call, a tenth of parsing a small aspect.
Its C scanner runs under the interpreter lock and keeps nothing between calls, so threads can share it."""


def parse_strict_json(text: str | bytes, invalid_reason: DecodeFailure, what: str) -> Any:
    """Parse ``text``; NaN, Infinity and 1e999 raise ``non_finite_number``, any other failure ``invalid_reason``."""
    try:
        if type(text) is str and not text.startswith("\ufeff"):  # json.loads' own checks, in its own order
            return _DECODER.decode(text)
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except _NonFiniteNumber as error:
        raise MclDecodeError("non_finite_number", f"{what}: {error}") from None
    except RecursionError:
        raise MclDecodeError(invalid_reason, f"{what} is nested too deeply") from None
    except (ValueError, TypeError) as error:  # JSONDecodeError, UnicodeDecodeError, int digit limit
        raise MclDecodeError(invalid_reason, f"{what} is not valid JSON: {describe_exception(error)}") from None
