"""Publisher: one finding in, the same words to GitHub and DataHub, exactly once, and a record of it."""

from __future__ import annotations

from typing import Protocol

from datahub.emitter.mcp import MetadataChangeProposalWrapper

from contracts.events.publication import ChannelResult, Published
from services.publisher.finding import Publishable, finding_of
from services.publisher.render_comment import comment_marker, render_comment
from services.publisher.render_incident import incident_digest, incident_urn, render_incident


class GitHubChannel(Protocol):
    def upsert_comment(self, repository: str, pull_request: int | None, marker: str, body: str) -> ChannelResult: ...


class DataHubChannel(Protocol):
    def upsert_incident(
        self, urn: str, semantic_digest: str, mcps: list[MetadataChangeProposalWrapper]
    ) -> ChannelResult: ...


def publish(
    incident_id: str,
    source_event_type: str,
    payload: Publishable,
    github: GitHubChannel,
    datahub: DataHubChannel,
    at_ms: int,
) -> Published:
    finding = finding_of(incident_id, payload)
    body = render_comment(finding)
    channels: list[ChannelResult] = []
    if finding.repository is not None:
        channels.append(
            github.upsert_comment(finding.repository, finding.pull_request, comment_marker(incident_id), body)
        )
    mcps = render_incident(finding, body, at_ms)
    channels.append(datahub.upsert_incident(incident_urn(finding), incident_digest(finding), mcps))
    return Published(
        run_id=getattr(payload, "run_id", None),
        outcome=finding.outcome,
        source_event_type=source_event_type,
        channels=channels,
    )
