"""The publication phase's record of what reached people, and whether it changed anything."""

from __future__ import annotations

from typing import Literal

from contracts.common import ArtifactRef, Frozen

ChannelStatus = Literal["created", "updated", "noop", "failed", "skipped"]


class ChannelResult(Frozen):
    channel: Literal["github", "datahub"]
    status: ChannelStatus
    target: str
    identifier: str
    content_digest: str
    dry_run: bool


class Published(Frozen):
    run_id: str | None
    outcome: str
    source_event_type: str
    channels: list[ChannelResult]
    attestation: ArtifactRef | None = None
