"""`is_canonical_bytes(document, data)` answers `canonical_bytes(document) == data`, and raises what
`canonical_bytes` raises, on every input: it is the check that a signed payload is the canonical form of the event
read from it, so a form that only another encoder writes (orjson's `0.00001` for Python's `1e-05`, `2.5e-7` for
`2.5e-07`, `null` for infinity) must never pass for canonical.

Each case is checked against the definition itself, `canonical_bytes(document) == data`."""

from __future__ import annotations

import datetime
import enum
import json
import math
import random
import struct
from typing import Any

import orjson
import pytest

from libs.canonical_json import canonical_bytes, is_canonical_bytes


def _definition(document: Any, data: bytes) -> bool:
    return canonical_bytes(document) == data


def _random_float(rng: random.Random) -> float:
    while True:
        if rng.random() < 0.5:  # any bit pattern: subnormals, huge and tiny exponents
            value: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
        else:  # magnitudes where the two encoders switch notation (1e-5, 1e-4, 1e16)
            value = rng.choice((1, -1)) * rng.random() * 10.0 ** rng.randint(-9, 18)
        if math.isfinite(value):
            return value


_KEY_CHARS = 'abzAZ_09 -é\u00ff\u0100\u2028\ud7ff\ue000\uffff\U0001f600\U0010ffff\x00\x1f\x7f"\\/'


def _random_text(rng: random.Random) -> str:
    return "".join(rng.choice(_KEY_CHARS) for _ in range(rng.randint(0, 6)))


def _random_document(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.choice((0, -1, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**64) - 1, 2**70, rng.randint(-999, 999)))
    if kind in (3, 4):
        return _random_float(rng)
    if kind in (5, 6):
        return _random_text(rng)
    if kind == 7:
        return [_random_document(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_random_text(rng): _random_document(rng, depth + 1) for _ in range(rng.randint(0, 5))}


def _other_forms(document: Any) -> list[bytes]:
    """Byte forms of the same document that are not canonical, or that another encoder writes."""
    forms = [
        json.dumps(document, ensure_ascii=False).encode(),  # whitespace
        json.dumps(document, sort_keys=True, separators=(",", ":")).encode(),  # \\u escapes
    ]
    try:
        forms.append(orjson.dumps(document, option=orjson.OPT_SORT_KEYS))
        forms.append(orjson.dumps(document))  # keys in insertion order
    except TypeError:  # orjson cannot write it (an integer beyond 64 bits, a lone surrogate)
        pass
    return forms


def test_random_documents_answer_as_the_definition() -> None:
    rng = random.Random(20261204)
    checked = disagreeing = 0
    for _ in range(4_000):
        document = _random_document(rng)
        canonical = canonical_bytes(document)
        assert is_canonical_bytes(document, canonical)
        for form in _other_forms(document):
            answer = is_canonical_bytes(document, form)
            assert answer == _definition(document, form), (document, form)
            checked += 1
            disagreeing += not answer
    assert disagreeing > 1_000  # the corpus holds many forms that are not canonical
    assert checked > 12_000


def test_floats_in_orjson_form_are_refused_wherever_python_writes_them_otherwise() -> None:
    rng = random.Random(7)
    differing = 0
    for _ in range(100_000):
        value = _random_float(rng)
        document = {"metric": value, "values": [value, 1]}
        theirs = orjson.dumps(document, option=orjson.OPT_SORT_KEYS)
        ours = canonical_bytes(document)
        assert is_canonical_bytes(document, ours)
        if theirs != ours:
            differing += 1
            assert not is_canonical_bytes(document, theirs), theirs
    assert differing > 5_000  # the two encoders disagree on many floats: the test reaches them


@pytest.mark.parametrize(
    ("document", "data"),
    [
        ({"x": 1e-05}, b'{"x":0.00001}'),
        ({"x": -6.26703014325946e-05}, b'{"x":-0.0000626703014325946}'),
        ({"x": 2.5e-07}, b'{"x":2.5e-7}'),
        ({"x": 1.0}, b'{"x":1}'),
        ({"x": 1}, b'{"x":1.0}'),
        ({"x": True}, b'{"x":1}'),
        ({"b": 1, "a": 2}, b'{"b":1,"a":2}'),
        ({"\ue000": 1, "\U0001f600": 2}, '{"\U0001f600":2,"\ue000":1}'.encode()),
        ({"x": "é"}, b'{"x":"\\u00e9"}'),
        ({"x": None}, b'{"x":null} '),
    ],
)
def test_other_forms_of_a_document_are_not_canonical(document: Any, data: bytes) -> None:
    assert not is_canonical_bytes(document, data)


@pytest.mark.parametrize(
    "document",
    [
        {"x": 1e-05, "y": 2.5e-07, "z": 1e16},
        {"\ue000": 1, "\U0001f600": 2, "a": [1.5, -0.0, 5e-324]},
        {"big": 2**70, "small": -(2**70)},
        {"text": '\x00\x1f\x7f\u2028 " \\ / é \U0010ffff'},
    ],
)
def test_canonical_forms_are_canonical(document: Any) -> None:
    assert is_canonical_bytes(document, canonical_bytes(document))


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_a_number_json_cannot_carry_raises_as_canonical_bytes_does(value: float) -> None:
    with pytest.raises(ValueError):
        canonical_bytes({"x": value})
    for data in (b'{"x":null}', b'{"x":Infinity}', b'{"x":NaN}'):  # what orjson and Python's json write for it
        with pytest.raises(ValueError):
            is_canonical_bytes({"x": value}, data)


def test_a_lone_surrogate_raises_as_canonical_bytes_does() -> None:
    with pytest.raises(UnicodeEncodeError):
        canonical_bytes({"x": "\ud800"})
    with pytest.raises(UnicodeEncodeError):
        is_canonical_bytes({"x": "\ud800"}, b'{"x":"\\ud800"}')


class _Colour(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


@pytest.mark.parametrize(
    ("document", "data"),
    [  # values orjson writes and Python's json does not, or writes otherwise: the answer is still the definition's
        ({"at": datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)}, b'{"at":"2026-01-01T00:00:00+00:00"}'),
        ({"colour": _Colour.RED}, b'{"colour":"red"}'),
        ({"level": _Level.HIGH}, b'{"level":3}'),
        ({"pair": (1, 2)}, b'{"pair":[1,2]}'),
        ({1: "one"}, b'{"1":"one"}'),
    ],
)
def test_values_beyond_plain_json_answer_as_the_definition(document: Any, data: bytes) -> None:
    try:
        expected: bool | type[Exception] = _definition(document, data)
    except (TypeError, ValueError) as error:
        expected = type(error)
    if isinstance(expected, bool):
        assert is_canonical_bytes(document, data) is expected
    else:
        with pytest.raises(expected):
            is_canonical_bytes(document, data)
