"""The publication phase's record of what reached people, and whether it changed anything."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from contracts.common import ArtifactRef, Frozen

ChannelStatus = Literal["created", "updated", "noop", "failed", "skipped"]


class ChannelResult(Frozen):
    channel: Literal["github", "datahub"]
    status: ChannelStatus
    target: str
    identifier: str
    content_digest: str
    dry_run: bool
    url: str | None = Field(
        default=None,
        description="where people read it, as the channel answered: the web address GitHub gave the comment on the "
        "pull request or the check run; none in a dry run, or when the channel gave none (since 1.2)",
    )


NotificationStatus = Literal["sent", "noop", "failed"]


class NotificationResult(Frozen):
    """One notification of an incident's state: sent once per (incident, state, channel); `noop` when it was."""

    channel: Literal["slack", "webhook"]
    status: NotificationStatus
    state: str
    target: str = Field(description="where it went, without credentials: the webhook's host")
    content_digest: str
    dry_run: bool


class Published(Frozen):
    run_id: str | None
    outcome: str
    source_event_type: str
    channels: list[ChannelResult]
    attestation: ArtifactRef | None = None
    notifications: list[NotificationResult] = Field(default_factory=list, description="since 1.1")
