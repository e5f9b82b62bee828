"""The fast schema check and the JSON facts against the SDK's own route, on aspects DataHub wrote and on mutations.

The rule that matters: the check may say "certainly valid" only where the SDK class accepts the value (it never
widens what is accepted), and the facts the mirror reads from JSON are those it would read from the SDK object.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest

from libs.datahub.mcl.aspect_decode import decode_aspect
from libs.datahub.mcl.aspect_facts import facts_of, indexed_aspects
from libs.datahub.mcl.aspect_facts_json import facts_of_json
from libs.datahub.mcl.aspect_shape import fits_schema
from libs.datahub.mcl.decode_error import MclDecodeError
from libs.datahub.mcl.prefilter import mirrored_aspects
from tests.unit.mcl.aspect_corpus import aspect_samples

SAMPLES = aspect_samples()
MUTATIONS_PER_SAMPLE = 12
_DELETE = object()


def _sdk_accepts(aspect_name: str, aspect_json: dict[str, Any]) -> bool:
    try:
        decode_aspect(aspect_name, aspect_json)
    except MclDecodeError:
        return False
    return True


def test_the_corpus_is_real_metadata_of_many_aspects() -> None:
    assert len(SAMPLES) >= 200
    assert len({name for _, name, _ in SAMPLES} & mirrored_aspects()) >= 8


def test_every_aspect_datahub_wrote_is_certainly_valid_and_the_sdk_agrees() -> None:
    refused = [(name, urn) for urn, name, value in SAMPLES if not fits_schema(name, value)]
    assert refused == []  # the fast route is taken for real metadata, not the SDK fallback
    assert all(_sdk_accepts(name, value) for _, name, value in SAMPLES)


def test_the_facts_read_from_json_are_the_facts_read_from_the_sdk_object() -> None:
    compared = 0
    for urn, name, value in SAMPLES:
        if name in indexed_aspects():
            assert facts_of_json(urn, name, value) == facts_of(urn, name, decode_aspect(name, value).value), (urn, name)
            compared += 1
    assert compared >= 50


def test_what_the_check_accepts_among_mutated_values_the_sdk_accepts_too() -> None:
    rng = random.Random(18)
    tried = accepted = 0
    for urn, name, value in SAMPLES:
        changes = list(_changes(value))
        for path, option in rng.sample(changes, min(MUTATIONS_PER_SAMPLE, len(changes))):
            mutated = _replaced(value, path, option)
            if not isinstance(mutated, dict):
                continue
            tried += 1
            if fits_schema(name, mutated):
                accepted += 1
                assert _sdk_accepts(name, mutated), (urn, name, mutated)
    assert tried >= 2_000 and 0 < accepted < tried  # both verdicts occur: the check is not trivially yes or no


@pytest.mark.parametrize(
    ("aspect_name", "value"),
    [
        ("status", {"removed": "yes"}),
        ("status", {"removed": False, "addedByANewerServer": 1}),
        ("ownership", {"owners": "urn:li:corpuser:ana"}),
        ("ownership", {"owners": [{"owner": "urn:li:corpuser:ana", "type": "NOT_A_TYPE"}]}),
        ("upstreamLineage", {"upstreams": [{"auditStamp": {"time": 0, "actor": "urn:li:corpuser:a"}, "dataset": "d"}]}),
        ("schemaMetadata", {"fields": []}),
    ],
)
def test_a_value_the_check_is_not_sure_of_is_left_to_the_sdk(aspect_name: str, value: dict[str, Any]) -> None:
    assert not fits_schema(aspect_name, value)


def test_an_unknown_union_member_is_never_certainly_valid() -> None:
    schema = next(value for _, name, value in SAMPLES if name == "schemaMetadata")
    mutated = copy.deepcopy(schema)
    mutated["fields"][0]["type"]["type"] = {"com.linkedin.schema.NoSuchType": {}}
    assert fits_schema("schemaMetadata", schema) and not fits_schema("schemaMetadata", mutated)
    assert not _sdk_accepts("schemaMetadata", mutated)


def _changes(value: dict[str, Any]) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """(where, what) of one change at one place: a field dropped, a value of another type, a union member or enum
    symbol renamed, an unknown field added, a list item duplicated or nulled."""
    for path, item in _walk(value):
        options: list[Any] = [_DELETE] if path else []
        if isinstance(item, bool):
            options += ["true", 1]
        elif isinstance(item, int):
            options += ["1", 1.5, 2**40, 2**70, True]
        elif isinstance(item, float):
            options += ["x", True]
        elif isinstance(item, str):
            options += [1, "NOT_A_SYMBOL", {"string": item}, [item]]
        elif isinstance(item, list):
            options += [{}, "x", [None], [1], item[:1] * 2]
        elif isinstance(item, dict):
            options += [[], "x", {**item, "unknownFieldXyz": 1}]
            if len(item) == 1:
                ((key, inner),) = item.items()
                options += [{"com.linkedin.schema.NoSuchType": inner}, inner, {key: inner, "other": 1}]
        for option in options:
            yield path, option


def _walk(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, (*path, index))


def _replaced(root: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copied = copy.deepcopy(root)
    parent = copied
    for key in path[:-1]:
        parent = parent[key]
    if new is _DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return copied
