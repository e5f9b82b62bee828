"""What an incident's state change says to people outside GitHub and DataHub: one message per incident and state.

The same facts for both channels: a Slack incoming webhook gets `text` (the fallback) and `blocks`; a generic
webhook gets a versioned JSON document a receiver can parse. Everything that comes from DataHub or the model's
repository (URNs, names, titles) is untrusted: for Slack it is escaped so that it can never become a mention
(`<!channel>`) or a link, and the webhook document carries it as JSON strings only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from contracts.outcomes import PublicationState
from libs.canonical_json import canonical_bytes, sha256_hex
from services.publisher.finding import Finding
from services.publisher.publication_links import PublicationLinks

WEBHOOK_EVENT_TYPE = "modelguard.incident.state"
WEBHOOK_VERSION = "1"

SAYS: dict[PublicationState, str] = {
    PublicationState.REPAIR_VALIDATED: "A repair was proposed and validated; a person decides whether to apply it",
    PublicationState.VALIDATION_FAILED: "A repair was proposed but did not pass validation",
    PublicationState.REPAIR_WITHHELD: "The cause is named; no repair is proposed",
    PublicationState.REPAIR_ABSTAINED: "The diagnosis abstained: no cause is sure enough to act on",
    PublicationState.UPSTREAM_RISK: "An upstream change in DataHub puts models at risk",
}


@dataclass(frozen=True)
class Notification:
    incident_id: str
    state: PublicationState
    title: str
    summary: str
    entities: tuple[str, ...]
    owners: tuple[str, ...]
    pull_request: str | None
    attestation_digest: str | None

    @property
    def delivery_id(self) -> str:
        """Stable per incident and state: a receiver that sees it twice can drop the second."""
        return f"{self.incident_id}:{self.state}"

    def webhook_document(self) -> dict[str, Any]:
        return {
            "type": WEBHOOK_EVENT_TYPE,
            "version": WEBHOOK_VERSION,
            "delivery_id": self.delivery_id,
            "incident_id": self.incident_id,
            "state": self.state,
            "title": self.title,
            "summary": self.summary,
            "entities": list(self.entities),
            "owners": list(self.owners),
            "pull_request": self.pull_request,
            "attestation_digest": self.attestation_digest,
        }

    def slack_document(self) -> dict[str, Any]:
        facts = [f"*Incident* `{_slack(self.incident_id)}`"]
        if self.pull_request:
            facts.append(f"*Pull request* {_slack(self.pull_request)}")
        if self.owners:
            facts.append("*Owners* " + ", ".join(_slack(o) for o in self.owners))
        facts.append("*Assets* " + ", ".join(_slack(e) for e in self.entities))
        return {
            "text": _slack(f"ModelGuard: {self.title}"),
            "blocks": [
                {"type": "header", "text": {"type": "plain_text", "text": _slack(_plain(self.title, 150))}},
                {"type": "section", "text": {"type": "mrkdwn", "text": _slack(self.summary)}},
                {"type": "section", "text": {"type": "mrkdwn", "text": "\n".join(facts)[:2900]}},
            ],
        }

    @property
    def content_digest(self) -> str:
        return sha256_hex(canonical_bytes(self.webhook_document()))


def _slack(text: str) -> str:
    """Slack's three control characters escaped, so untrusted text is shown, never interpreted."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _plain(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def notification_of(finding: Finding, links: PublicationLinks) -> Notification:
    state = finding.state
    pull_request = (
        f"{finding.repository}#{finding.pull_request}" if finding.repository and finding.pull_request else None
    )
    return Notification(
        incident_id=finding.incident_id,
        state=state,
        title=finding.title,
        summary=SAYS[state],
        entities=tuple(finding.entities),
        owners=tuple(finding.owners),
        pull_request=pull_request,
        attestation_digest=links.attestation_digest,
    )
