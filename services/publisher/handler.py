"""Publisher: one finding in, the same words to GitHub and DataHub, exactly once, and a record of it.

Order: attest the source event (the attestation's digest is linked from every publication), then GitHub
(comment, review, check run), then DataHub: the model's gate as an assertion with this evaluation's run, then each
incident (linked to that assertion); last, one notification per incident state on each configured channel
(Slack, a signed webhook). Every step is find-then-act against what the remote
holds, so a publication that fails halfway (a `ChannelUnavailable`, retried by the bus) publishes nothing
twice when it runs again.
"""

from __future__ import annotations

from typing import Protocol

from contracts.events.context import UpstreamRiskDetected
from contracts.events.publication import ChannelResult, Published
from libs.events.codec import SignedEvent
from services.publisher.attestation_step import Attestor
from services.publisher.finding import Publishable, finding_of
from services.publisher.github_documents import GitHubPublication
from services.publisher.notification_message import notification_of
from services.publisher.notifier import Notifier
from services.publisher.publication_links import PublicationLinks
from services.publisher.render_assertion import AssertionDraft, render_gate_assertion
from services.publisher.render_comment import render_content
from services.publisher.render_github import render_github
from services.publisher.render_incident import IncidentDraft, render_incidents


class GitHubChannel(Protocol):
    def publish(self, publication: GitHubPublication) -> list[ChannelResult]: ...


class DataHubChannel(Protocol):
    def upsert_assertion(self, draft: AssertionDraft) -> list[ChannelResult]: ...

    def upsert_incident(self, draft: IncidentDraft) -> ChannelResult: ...


def publish(
    source: SignedEvent,
    github: GitHubChannel,
    datahub: DataHubChannel,
    attest: Attestor | None = None,
    ledger_position: int | None = None,
    notifier: Notifier | None = None,
) -> Published:
    meta = source.event.meta
    payload: Publishable = source.event.payload
    finding = finding_of(meta.incident_id, payload)
    attestation = attest(source) if attest is not None else None
    links = PublicationLinks(
        incident_id=meta.incident_id,
        ledger_position=ledger_position,
        attestation_digest=attestation.digest if attestation else None,
        attestation_artifact=attestation.artifact.sha256 if attestation else None,
    )
    content = render_content(finding)
    channels: list[ChannelResult] = []
    if (github_publication := render_github(finding, content, links)) is not None:
        channels += github.publish(github_publication)
    at_ms = int(meta.occurred_at.timestamp() * 1000)
    source_urn = payload.source_urn if isinstance(payload, UpstreamRiskDetected) else None
    if not isinstance(payload, UpstreamRiskDetected):
        assertion = render_gate_assertion(meta.incident_id, payload.run_id, payload.workspace, payload.gate, at_ms)
        channels += datahub.upsert_assertion(assertion)
        source_urn = assertion.urn
    drafts = render_incidents(finding, content, links, at_ms, source_urn)
    channels += [datahub.upsert_incident(draft) for draft in drafts]
    notifications = notifier.notify(notification_of(finding, links)) if notifier is not None else []
    return Published(
        run_id=getattr(payload, "run_id", None),
        outcome=finding.outcome,
        source_event_type=meta.event_type,
        channels=channels,
        attestation=attestation.artifact if attestation else None,
        notifications=notifications,
    )
