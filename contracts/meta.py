"""Metadata every ModelGuard event carries, whatever its type."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

SHA256_HEX = r"^[0-9a-f]{64}$"


class EventMeta(BaseModel):
    """Identity, causality and provenance of one event.

    `event_id` is deterministic: a digest of producer, incident, type and input digests, so a phase that
    runs twice on the same inputs produces the same id and the second append is a no-op.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: str = Field(pattern=r"^[0-9a-f]{32}$")
    event_type: str = Field(min_length=1, max_length=64)
    event_version: str = Field(pattern=r"^\d+\.\d+$")
    incident_id: str = Field(pattern=r"^inc-[0-9a-f]{16}$")
    producer: str = Field(min_length=1, max_length=64)
    producer_version: str = Field(min_length=1, max_length=32)
    causation_id: str | None = Field(default=None, pattern=r"^[0-9a-f]{32}$")
    input_digests: tuple[str, ...] = Field(default=(), description="sha256 of the envelopes this was computed from")
    ancestry: tuple[str, ...] = Field(
        default=(),
        description="sha256 of every envelope in the causal chain before this event, oldest first (provenance)",
    )
    occurred_at: datetime
