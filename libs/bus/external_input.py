"""Inputs from outside ModelGuard (DataHub's MetadataChangeLog topics): raw bytes in, first events out.

They are not signed envelopes, so they skip envelope verification and the processed-inputs table; each
handler decodes its own bytes as untrusted and answers with the first events of new incidents.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel


@dataclass(frozen=True)
class FirstEvent:
    """The payload of an incident's first event, the incident it opens, and the digest of the raw input."""

    payload: BaseModel
    incident_id: str
    input_digest: str


@dataclass(frozen=True)
class ExternalInput:
    name: str
    topics: tuple[str, ...]
    handle: Callable[[bytes], Sequence[FirstEvent]]
    after_publish: Callable[[Sequence[FirstEvent]], None] = field(default=lambda _events: None)
