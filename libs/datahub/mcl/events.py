"""A decoded MetadataChangeLog event, as the mirror and risk detection consume it.

The aspect JSON is parsed strictly when the event is decoded (bad JSON and NaN fail there, with the
event). The typed SDK aspect — the expensive step, 0.1 to 2.5 ms for a schemaMetadata — is built on first
access and cached (:class:`~libs.datahub.mcl.decoder.MclDecoder` validates every kept value against the SDK
class's schema without building it, and builds it only when that check is not certain); the previous value is
built on first access of :attr:`DecodedMcl.previous_aspect`.
Building them can raise :class:`~libs.datahub.mcl.decode_error.MclDecodeError` (``bad_aspect``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from datahub.metadata.schema_classes import _Aspect

from libs.datahub.mcl.aspect_decode import TypedAspect, decode_aspect

AspectDecoder = Callable[[str, dict[str, Any]], TypedAspect]


@dataclass(frozen=True)
class DecodedMcl:
    entity_type: str
    urn: str
    change_type: str
    aspect_name: str | None
    aspect_json: dict[str, Any] | None
    """The aspect in DataHub's JSON form (``com.linkedin.*`` union names), None when the MCL has none."""
    previous_aspect_json: dict[str, Any] | None
    created_time_millis: int | None = None
    created_actor: str | None = None
    run_id: str | None = None
    aspect_text: str | None = None
    """The aspect JSON exactly as received (stored by the mirror without re-serialising)."""
    aspect_version: str | None = None
    """``systemMetadata.version``: the aspect's version in DataHub when the server sent it."""
    previous_aspect_text: str | None = None
    """``previousAspectValue`` exactly as received."""
    decode_typed: AspectDecoder = field(default=decode_aspect, repr=False, compare=False)

    @cached_property
    def typed_aspect(self) -> TypedAspect | None:
        if self.aspect_json is None or self.aspect_name is None:
            return None
        return self.decode_typed(self.aspect_name, self.aspect_json)

    @cached_property
    def typed_previous_aspect(self) -> TypedAspect | None:
        if self.previous_aspect_json is None or self.aspect_name is None:
            return None
        return self.decode_typed(self.aspect_name, self.previous_aspect_json)

    @property
    def aspect(self) -> _Aspect | None:
        """The new aspect value as the SDK's class (decoded on first access)."""
        typed = self.typed_aspect
        return typed.value if typed else None

    @property
    def previous_aspect(self) -> _Aspect | None:
        """``previousAspectValue`` as the SDK's class (decoded on first access); None when absent."""
        typed = self.typed_previous_aspect
        return typed.value if typed else None
