"""Strict JSON parsing for untrusted MCL input: NaN, Infinity and numbers too large for a float (1e999) are
refused, and every failure is typed.

Same rule as :func:`libs.canonical_json.strict_loads`, with the refusal raised as its own exception so
that it gets its own reason (``non_finite_number``) instead of being confused with other ValueErrors
(over-long integers, bad encodings).

orjson answers first, in about half the time of Python's parser (an aspect of the MCL benchmark stream: 6.6 against
3.4 µs). It refuses NaN, Infinity and numbers beyond a float as this module does, and surrogates, BOMs and nesting
deeper than 1,024 that Python's parser may take; every refusal of orjson's goes to Python's parser, which decides and
words it as before. Where orjson would read otherwise, it is not asked: an integer beyond 64 bits comes back from it
as a float, so a text with a run of 19 digits (every such integer has one) goes to Python's parser alone (found
by mapping each byte to a digit or a space and looking for 19 digits: 0.6 µs for such an aspect, a regular
expression's search 3.4).
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

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


_ZEROS_AND_SPACES = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_INTEGER = b"0" * 19
"""An integer beyond 64 bits has at least 19 digits: once every digit is made a 0, this run is in its text."""


def parse_strict_json(text: str | bytes, invalid_reason: DecodeFailure, what: str) -> Any:
    """Parse ``text``; NaN, Infinity and 1e999 raise ``non_finite_number``, any other failure ``invalid_reason``."""
    if (fast := _orjson_loads(text)) is not _NOT_READ:
        return fast
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


_NOT_READ = object()


def _orjson_loads(text: str | bytes) -> Any:
    """orjson's document, or `_NOT_READ` when orjson refuses it or is not asked (a run of 19 digits)."""
    try:
        raw = text.encode("utf-8") if type(text) is str else text
    except UnicodeEncodeError:  # a lone surrogate in the text
        return _NOT_READ
    if not isinstance(raw, bytes) or _LONG_INTEGER in raw.translate(_ZEROS_AND_SPACES):
        return _NOT_READ
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _NOT_READ
