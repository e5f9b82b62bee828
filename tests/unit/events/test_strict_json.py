"""`strict_loads`: the JSON every signed document is read with refuses what canonical JSON cannot write again: NaN,
Infinity, and a number too large for a float (1e999 reads as infinity)."""

from __future__ import annotations

import pytest

from libs.canonical_json import canonical_bytes, strict_loads


@pytest.mark.parametrize("text", ['{"a": NaN}', "[Infinity]", "[-Infinity]", '{"a": 1e999}', "[-1e400]", b"[2E+308]"])
def test_what_canonical_json_cannot_write_is_refused(text: str | bytes) -> None:
    with pytest.raises(ValueError, match=r"not valid JSON|too large for a float"):
        strict_loads(text)


@pytest.mark.parametrize("text", ["[1.7976931348623157e308]", "[5e-324]", "[1e-999]", '{"a": [1.5, -2e-7, 10]}'])
def test_every_finite_number_reads_and_writes_again(text: str) -> None:
    document = strict_loads(text)
    assert strict_loads(canonical_bytes(document)) == document


@pytest.mark.parametrize("text", ['{"a": ' * 50_000 + "1" + "}" * 50_000, "[" * 50_000 + "]" * 50_000])
def test_json_nested_past_the_parsers_depth_is_refused_as_invalid(text: str) -> None:
    """Python's json parser recurses per level: past its limit it raises RecursionError, which no caller of a
    parser expects; the bytes come from outside (DataHub, a file), so they are invalid JSON with the reason."""
    with pytest.raises(ValueError, match="nested too deeply"):
        strict_loads(text)
