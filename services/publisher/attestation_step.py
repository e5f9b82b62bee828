"""The publication's attestation: signed by the publisher, stored in the artifact store, linked from both
publications by its digest (the sha256 of the DSSE envelope, which is also its artifact id)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from contracts.common import ArtifactRef
from libs.artifacts.store import ArtifactStore
from libs.attestation import ATTESTATION_MEDIA_TYPE, attest_publication
from libs.events.codec import SignedEvent
from libs.signing.keys import SigningKey


@dataclass(frozen=True)
class AttestationLink:
    digest: str
    artifact: ArtifactRef


Attestor = Callable[[SignedEvent], AttestationLink]


def attestor(store: ArtifactStore, key: SigningKey) -> Attestor:
    def attest(source: SignedEvent) -> AttestationLink:
        attestation = attest_publication(source, key)
        return AttestationLink(attestation.digest, store.put(attestation.envelope_bytes, ATTESTATION_MEDIA_TYPE))

    return attest
