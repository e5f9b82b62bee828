"""A fast check that an aspect's JSON (DataHub's form) fits the SDK class's Avro schema, without building the class.

The SDK route (:func:`~libs.datahub.mcl.aspect_decode.decode_aspect`: ``from_obj``, ``validate()``, a re-encode
and a fidelity comparison) costs 0.03 to 2.5 ms per aspect; most mirrored aspects only need to be *known valid*,
not turned into objects. :func:`fits_schema` walks the JSON once against a checker compiled from the aspect
class's own ``RECORD_SCHEMA`` (the schema the SDK class is generated from) and answers:

- ``True``: the value is certainly one the SDK route accepts (every field the schema requires is there with a
  value of its type, every union value names one of the union's members, every enum value is a symbol, ints
  are in range);
- ``False``: not certain. The caller then takes the SDK route, which accepts or refuses with its reason.

So the checker never widens what is accepted: it may only say "yes" where the SDK says "yes"
(``tests/unit/mcl/test_mcl_aspect_shape.py`` checks that on DataHub's golden files, the poison corpus and
mutated values). It says "not certain" for anything unusual: a field the schema does not have (a newer server's
addition, which the SDK drops with a warning), a required field without a default missing, bytes and fixed
values, a union value in a form the SDK reads leniently.

DataHub's JSON form (``pre_json_transform`` of avrogen's ``to_obj``): ``null`` means absent; a union with one
non-null member holds the bare value (an enum member only beside null), except as an array's item, where it is
wrapped like any other union as ``{"<member name>": value}`` (member names are ``com.linkedin.*`` full names of named
types, else the Avro type name).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import avro.schema
from datahub.emitter.aspect import ASPECT_MAP

Check = Callable[[Any], bool]

_PEGASUS_PREFIX = "com.linkedin.pegasus2avro."
_RESTLI_PREFIX = "com.linkedin."
_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)


def fits_schema(aspect_name: str, aspect_json: dict[str, Any]) -> bool:
    """True when ``aspect_json`` is certainly a valid ``aspect_name`` for the SDK; False when not certain."""
    check = aspect_check(aspect_name)
    return check is not None and check(aspect_json)


@cache
def aspect_check(aspect_name: str) -> Check | None:
    """The compiled checker of one aspect (None for an aspect this SDK does not know)."""
    aspect_class = ASPECT_MAP.get(aspect_name)
    if aspect_class is None:
        return None
    return _Compiler().record(aspect_class.RECORD_SCHEMA)


def member_name(schema: avro.schema.Schema) -> str:
    """A union member's name in DataHub's JSON form: ``com.linkedin.*`` full name, else the Avro type."""
    if isinstance(schema, avro.schema.NamedSchema):
        fullname = str(schema.fullname).lstrip(".")
        return _RESTLI_PREFIX + fullname[len(_PEGASUS_PREFIX) :] if fullname.startswith(_PEGASUS_PREFIX) else fullname
    return str(schema.type)


class _Compiler:
    """Builds checkers; named records are compiled once per aspect (recursive schemas refer to the cell)."""

    def __init__(self) -> None:
        self._records: dict[str, list[Check]] = {}

    def of(self, schema: avro.schema.Schema, in_collection: bool = False) -> Check:
        if isinstance(schema, avro.schema.RecordSchema):
            return self.record(schema)
        if isinstance(schema, avro.schema.EnumSchema):
            symbols = frozenset(schema.symbols)
            return lambda value: isinstance(value, str) and value in symbols
        if isinstance(schema, avro.schema.ArraySchema):
            return _array(self.of(schema.items, in_collection=True))
        if isinstance(schema, avro.schema.MapSchema):
            return _map(self.of(schema.values))
        if isinstance(schema, avro.schema.UnionSchema):
            return self.union(schema, in_collection)
        return _primitive(str(schema.type))

    def record(self, schema: avro.schema.RecordSchema) -> Check:
        cell = self._records.get(schema.fullname)
        if cell is None:
            cell = self._records[schema.fullname] = []
            cell.append(self._build_record(schema))
        return lambda value: cell[0](value)

    def _build_record(self, schema: avro.schema.RecordSchema) -> Check:
        fields = tuple((field.name, self.of(field.type), not field.has_default) for field in schema.fields)
        known = frozenset(name for name, _, _ in fields)

        def check(value: Any) -> bool:
            if type(value) is not dict or not known.issuperset(value):
                return False
            for name, check_field, required in fields:
                item = value.get(name)
                if item is None:
                    if required:
                        return False
                elif not check_field(item):
                    return False
            return True

        return check

    def union(self, schema: avro.schema.UnionSchema, in_collection: bool) -> Check:
        members = [member for member in schema.schemas if member.type != "null"]
        if any(isinstance(member, avro.schema.EnumSchema) for member in members):
            unambiguous = len(schema.schemas) == 2 and len(members) == 1
        else:
            unambiguous = len(members) <= 1
        if unambiguous and not in_collection:
            return self.of(members[0]) if members else _primitive("null")
        by_name = {member_name(member): self.of(member) for member in members}

        def check(value: Any) -> bool:
            if type(value) is not dict or len(value) != 1:
                return False
            ((name, inner),) = value.items()
            check_member = by_name.get(name)
            return check_member is not None and inner is not None and check_member(inner)

        return check


def _array(check_item: Check) -> Check:
    # every checker refuses None (a null item is not absent: the SDK route decides)
    return lambda value: type(value) is list and all(map(check_item, value))


def _map(check_value: Check) -> Check:
    # a null map value is dropped on the SDK route, as it is here
    return lambda value: type(value) is dict and all(item is None or check_value(item) for item in value.values())


def _primitive(type_name: str) -> Check:
    if type_name == "string":
        return lambda value: type(value) is str
    if type_name == "boolean":
        return lambda value: type(value) is bool
    if type_name in ("int", "long"):
        low, high = _INT_RANGE if type_name == "int" else _LONG_RANGE
        return lambda value: type(value) is int and low <= value <= high
    if type_name in ("float", "double"):
        return lambda value: type(value) is float or type(value) is int
    return lambda value: False  # bytes, fixed, null: not certain, the SDK route decides
