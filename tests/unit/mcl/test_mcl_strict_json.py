"""`parse_strict_json` shares one decoder across calls: it must accept and refuse exactly what a fresh
``json.loads(text, parse_constant=..., parse_float=...)`` does, with the same reasons, for text and for bytes."""

from __future__ import annotations

import json
import math
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


@pytest.mark.parametrize("text", INPUTS, ids=range(len(INPUTS)))
def test_the_shared_decoder_agrees_with_a_fresh_one(text: str | bytes) -> None:
    assert _ours(text) == _reference(text)


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
