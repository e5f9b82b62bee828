"""`parse_strict_json` shares one decoder across calls and asks orjson first: it must accept and refuse exactly what
a fresh ``json.loads(text, parse_constant=..., parse_float=...)`` does, with the same reasons and values of the same
types (an integer stays an integer however long), for text and for bytes."""

from __future__ import annotations

import json
import math
import random
import threading
from typing import Any

import pytest

from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.strict_json import parse_strict_json

INPUTS: list[str | bytes] = [
    '{"a": 1, "b": [1.5, -2e-7, null, true], "c": {"d": "é\\u2028"}}',
    "[]",
    '"just a string"',
    '{"a": NaN}',
    '{"a": -Infinity}',
    "[Infinity]",
    "\ufeff{}",
    '{"a": 1} trailing',
    '{"a": }',
    "",
    "  ",
    "[" * 100_000 + "]" * 100_000,
    "1" * 5_000,
    '{"a": "\\ud800"}',
    b'{"a": 1}',
    b"\xef\xbb\xbf{}",
    b'{"a": "\xff"}',
    '{"a": 1}'.encode("utf-16"),
    b"NaN",
    '{"a": 1e999}',
    "[-1e400, 1]",
    b'{"a": 2E+308}',
    "[1.7976931348623157e308, 5e-324, 1e-999]",
    "[9223372036854775807, -9223372036854775808, 18446744073709551615]",
    "[9223372036854775808, -9223372036854775809, 18446744073709551616]",
    '{"id": 123456789012345678901234567890, "neg": -98765432109876543210}',
    '{"urn": "urn:li:dataset:1234567890123456789012", "n": 1}',
    "[0.1234567890123456789012, 1.0000000000000002, 2.2250738585072011e-308, 4.9406564584124654e-324]",
    "[-0, -0.0, 0e0, 1E5, 1e+2, 0.1e1]",
    '{"a": 1, "a": 2}',
    '{"a": "\x01"}',
    '{"a": "\u0000\ud83d\ude00"}',
    "[" * 1_100 + "]" * 1_100,
]


def _reference(text: str | bytes) -> tuple[str, Any]:
    """What a decoder made for this one call says: ("ok", value) or ("refused", reason)."""

    def refuse(name: str) -> Any:
        raise OverflowError(name)  # stands for "a non-finite number was refused"

    def finite(number: str) -> float:
        if math.isinf(float(number)):
            raise OverflowError(number)  # 1e999 reads as infinity
        return float(number)

    try:
        return "ok", json.loads(text, parse_constant=refuse, parse_float=finite)
    except OverflowError:
        return "refused", "non_finite_number"
    except (ValueError, TypeError, RecursionError):
        return "refused", "bad_aspect_json"


def _ours(text: str | bytes) -> tuple[str, Any]:
    try:
        return "ok", parse_strict_json(text, "bad_aspect_json", "aspect")
    except MclDecodeError as error:
        return "refused", error.reason


def _typed(outcome: tuple[str, Any]) -> tuple[str, str]:
    """The outcome with its value written out with each number's type (``2**64 == float(2**64)`` in Python)."""
    return outcome[0], repr(outcome[1])


def _number(rng: random.Random) -> str:
    digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 26))).lstrip("0") or "0"
    sign = "-" if rng.random() < 0.3 else ""
    shape = rng.randrange(4)
    if shape == 0:
        return sign + digits
    fraction = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 22)))
    exponent = f"{rng.choice('eE')}{rng.choice(['', '+', '-'])}{rng.randrange(0, 340)}"
    return sign + digits + ("." + fraction if shape != 2 else "") + (exponent if shape != 1 else "")


def _value(rng: random.Random, depth: int) -> str:
    kind = rng.randrange(7 if depth < 5 else 5)
    if kind == 0:
        return _number(rng)
    if kind == 1:
        return json.dumps("".join(rng.choice('aé\u2028"\\/\n😀\x7f') for _ in range(rng.randrange(8))))
    if kind == 2:
        return rng.choice(["true", "false", "null"])
    if kind == 3:
        return '"urn:li:x:' + "9" * rng.randrange(15, 30) + '"'
    if kind == 4:
        return rng.choice(["NaN", "Infinity", "-Infinity", "1e999", "0", "-0"])
    if kind == 5:
        return "[" + ", ".join(_value(rng, depth + 1) for _ in range(rng.randrange(4))) + "]"
    items = (f'"k{i}": {_value(rng, depth + 1)}' for i in range(rng.randrange(4)))
    return "{" + ", ".join(items) + "}"


def test_generated_documents_and_their_spoiled_copies_read_as_a_fresh_decoder_reads_them() -> None:
    rng = random.Random(17)
    for _ in range(3_000):
        text = _value(rng, 0)
        if rng.random() < 0.3:  # a character changed, or the end cut off
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice(["", "x", "}", "]", ",", "\x00", "\ud800"]) + text[at + 1 :]
        for form in (text, text.encode("utf-8", "surrogatepass")):
            assert _typed(_ours(form)) == _typed(_reference(form)), form


@pytest.mark.parametrize("text", INPUTS, ids=range(len(INPUTS)))
def test_the_shared_decoder_agrees_with_a_fresh_one(text: str | bytes) -> None:
    assert _typed(_ours(text)) == _typed(_reference(text))


def test_a_refusal_leaves_the_shared_decoder_as_it_was() -> None:
    assert _ours('{"a": NaN}') == ("refused", "non_finite_number")
    assert _ours('{"a": [1, {"b": 2}]}') == ("ok", {"a": [1, {"b": 2}]})


def test_threads_sharing_it_each_get_their_own_document() -> None:
    documents = [json.dumps({"thread": n, "values": list(range(n, n + 50))}) for n in range(8)]
    wrong: list[int] = []

    def parse_many(n: int) -> None:
        for _ in range(2_000):
            if parse_strict_json(documents[n], "bad_aspect_json", "aspect") != json.loads(documents[n]):
                wrong.append(n)

    threads = [threading.Thread(target=parse_many, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []


def test_a_number_too_large_for_a_float_is_refused_like_infinity() -> None:
    assert _ours('{"a": [1, 1e999]}') == ("refused", "non_finite_number")
    assert _ours("[-1e400]") == ("refused", "non_finite_number")
    assert _ours("[1e308, 1e-999]") == ("ok", [1e308, 0.0])
