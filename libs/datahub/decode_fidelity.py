"""Check that a typed SDK object says what the JSON it was decoded from says.

acryl-datahub's ``from_obj`` is lenient: an unknown union member silently decodes as the union's first
member (``{"com.linkedin.schema.Bogus": {}}`` becomes ``BooleanType``), unknown record fields are dropped,
and ``validate()`` still passes. Comparing the input JSON with the re-encoded object catches both.

Both sides are compared in DataHub's JSON form (``pre_json_transform`` output, ``com.linkedin.*`` union
keys); ``None`` in the input means "absent" and is not compared (defaults are filled in on decode).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

MismatchKind = Literal["union-member", "unknown-field", "changed-value"]


@dataclass(frozen=True)
class DecodeMismatch:
    location: str
    kind: MismatchKind
    expected: str
    found: str

    def describe(self) -> str:
        where = self.location or "<root>"
        if self.kind == "union-member":
            return f"at {where}: union member {self.expected} is unknown to the SDK (decoded as {self.found})"
        if self.kind == "unknown-field":
            return f"at {where}: field {self.expected!r} is not in the SDK's schema and was dropped"
        return f"at {where}: expected {self.expected}, decoded {self.found}"


def decode_mismatches(original: Any, decoded: Any, location: str = "") -> list[DecodeMismatch]:
    """Every place where ``decoded`` does not carry what ``original`` carried."""
    if original is None:
        return []
    if isinstance(original, dict):
        return _dict_mismatches(original, decoded, location)
    if isinstance(original, list):
        return _list_mismatches(original, decoded, location)
    if _same_scalar(original, decoded):
        return []
    return [DecodeMismatch(location, "changed-value", _short(original), _short(decoded))]


def _dict_mismatches(original: dict[str, Any], decoded: Any, location: str) -> list[DecodeMismatch]:
    if not isinstance(decoded, dict):
        return [DecodeMismatch(location, "changed-value", "an object", _short(decoded))]
    if _is_other_union_member(original, decoded):
        (expected,) = original
        (found,) = decoded
        return [DecodeMismatch(location, "union-member", expected, found)]
    mismatches: list[DecodeMismatch] = []
    for key, value in original.items():
        if value is None:
            continue
        child = f"{location}.{key}" if location else key
        if key not in decoded:
            mismatches.append(DecodeMismatch(location, "unknown-field", key, "nothing"))
            continue
        mismatches.extend(decode_mismatches(value, decoded[key], child))
    return mismatches


def _list_mismatches(original: list[Any], decoded: Any, location: str) -> list[DecodeMismatch]:
    if not isinstance(decoded, list) or len(decoded) != len(original):
        return [DecodeMismatch(location, "changed-value", f"a list of {len(original)}", _short(decoded))]
    mismatches: list[DecodeMismatch] = []
    for index, (item, decoded_item) in enumerate(zip(original, decoded, strict=True)):
        mismatches.extend(decode_mismatches(item, decoded_item, f"{location}[{index}]"))
    return mismatches


def _is_other_union_member(original: dict[str, Any], decoded: dict[str, Any]) -> bool:
    # A union value is a one-key object naming its member; decoding as another member changes the key.
    return len(original) == 1 and len(decoded) == 1 and next(iter(original)) not in decoded


def _same_scalar(original: Any, decoded: Any) -> bool:
    if isinstance(original, bool) or isinstance(decoded, bool):
        return type(original) is type(decoded) and original == decoded
    if isinstance(original, int | float) and isinstance(decoded, int | float):
        return original == decoded
    return type(original) is type(decoded) and original == decoded


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
