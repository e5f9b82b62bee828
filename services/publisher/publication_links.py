"""The footer every publication carries: links back to the ModelGuard incident, its ledger position and its
attestation.

The footer is kept apart from the content it follows. A CI retry produces a new attestation (new run, new
events) for the same finding; the publisher compares content only, so a retry leaves the earlier footer in
place (its attestation covers the same patch and decision) instead of rewriting every publication.
"""

from __future__ import annotations

from dataclasses import dataclass

FOOTER_SEPARATOR = "\n\n---\n<sub>ModelGuard incident "


@dataclass(frozen=True)
class PublicationLinks:
    incident_id: str
    ledger_position: int | None = None
    attestation_digest: str | None = None
    attestation_artifact: str | None = None

    def footer(self) -> str:
        parts = [f"`{self.incident_id}`"]
        if self.ledger_position is not None:
            parts.append(f"ledger position {self.ledger_position}")
        if self.attestation_digest is not None:
            parts.append(f"attestation `sha256:{self.attestation_digest}`")
        if self.attestation_artifact is not None and self.attestation_artifact != self.attestation_digest:
            parts.append(f"stored as artifact `sha256:{self.attestation_artifact}`")
        return FOOTER_SEPARATOR + " · ".join(parts) + "</sub>\n"


def with_footer(content: str, links: PublicationLinks) -> str:
    return content.rstrip("\n") + links.footer()


def content_of(text: str) -> str:
    """The text without its links footer (the part whose changes count)."""
    head, separator, _ = text.rpartition(FOOTER_SEPARATOR)
    return head if separator else text.rstrip("\n")


def same_content(published: str | None, content: str) -> bool:
    return published is not None and content_of(published) == content.rstrip("\n")
