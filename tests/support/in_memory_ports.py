"""In-memory stand-ins for the services' ports, for unit tests that hand them to a service's composition root
(``definition(ports)`` in ``services/<name>/wiring.py``) instead of the production adapters ``bootstrap.py``
builds from Settings. Each keeps what it was handed, so a test asserts on what the service did through it."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime

from contracts.common import ArtifactRef
from contracts.context_snapshot import ContextSnapshot
from contracts.events.publication import ChannelResult
from libs.artifacts.store import ArtifactCorrupted, ArtifactNotFound, digest_of
from libs.ledger.rows import CheckpointRow
from services.publisher.github_documents import GitHubPublication
from services.publisher.render_assertion import AssertionDraft
from services.publisher.render_incident import IncidentDraft

FIXED_TIME = datetime(2026, 11, 29, 12, 30, tzinfo=UTC)


def fixed_clock() -> datetime:
    """A clock that always says ``FIXED_TIME``."""
    return FIXED_TIME


class InMemoryArtifactStore:
    """The ``ArtifactStore`` port over a dict, digest-checked on every read as the real stores are."""

    def __init__(self) -> None:
        self.blobs: dict[str, bytes] = {}

    def put(self, data: bytes, media_type: str) -> ArtifactRef:
        sha256 = hashlib.sha256(data).hexdigest()
        self.blobs.setdefault(sha256, bytes(data))
        return ArtifactRef(sha256=sha256, media_type=media_type, size=len(data))

    def get(self, ref: ArtifactRef | str) -> bytes:
        sha256 = digest_of(ref)
        if sha256 not in self.blobs:
            raise ArtifactNotFound(sha256)
        data = self.blobs[sha256]
        if hashlib.sha256(data).hexdigest() != sha256:
            raise ArtifactCorrupted(sha256)
        return data

    def exists(self, sha256: str) -> bool:
        return sha256 in self.blobs

    def describe(self) -> str:
        return f"memory ({len(self.blobs)} blobs)"


@dataclass
class StaticContextProvider:
    """The ``ContextProvider`` port: the same snapshot for every model, and the requests it was asked."""

    snapshot: ContextSnapshot
    asked: list[tuple[str, str]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.snapshot.provider

    def collect(self, model_urn: str, fetched_at: str) -> ContextSnapshot:
        self.asked.append((model_urn, fetched_at))
        return self.snapshot.model_copy(update={"model_urn": model_urn, "fetched_at": fetched_at})


def _result(channel: str, target: str, identifier: str) -> ChannelResult:
    digest = hashlib.sha256(identifier.encode()).hexdigest()
    return ChannelResult.model_validate(
        {
            "channel": channel,
            "status": "created",
            "target": target,
            "identifier": identifier,
            "content_digest": digest,
            "dry_run": True,
        }
    )


@dataclass
class RecordingGitHub:
    """The publisher's ``GitHubChannel`` port: keeps each publication it is handed."""

    published: list[GitHubPublication] = field(default_factory=list)

    def publish(self, publication: GitHubPublication) -> list[ChannelResult]:
        self.published.append(publication)
        return [_result("github", publication.repository, publication.comment.marker)]


@dataclass
class RecordingDataHub:
    """The publisher's ``DataHubChannel`` port: keeps each assertion and incident it is handed."""

    assertions: list[AssertionDraft] = field(default_factory=list)
    incidents: list[IncidentDraft] = field(default_factory=list)

    def upsert_assertion(self, draft: AssertionDraft) -> list[ChannelResult]:
        self.assertions.append(draft)
        return [_result("datahub", draft.urn, draft.urn)]

    def upsert_incident(self, draft: IncidentDraft) -> ChannelResult:
        self.incidents.append(draft)
        return _result("datahub", draft.urn, draft.urn)


@dataclass
class RecordingHeads:
    """The ledger's ``HeadSink`` port: keeps each checkpoint head it is told of."""

    heads: list[CheckpointRow] = field(default_factory=list)

    def record(self, checkpoint: CheckpointRow) -> None:
        self.heads.append(checkpoint)
