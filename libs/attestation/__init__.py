"""Signed attestations of what ModelGuard publishes: an in-toto Statement v1 in an Ed25519-signed DSSE envelope.

`attest_publication(source, key)` is called by the publisher with its verified input event;
`verify_attestation(envelope_bytes, registry)` checks one offline with the public keys;
`cross_check(attestation, store, registry)` follows its causal chain back into the incident log.
"""

from libs.attestation.attest import Attestation, attest_publication
from libs.attestation.ledger_cross_check import LedgerCrossCheck, LedgerLink, cross_check
from libs.attestation.predicate import IncidentPredicate
from libs.attestation.publishable import NotAttestable
from libs.attestation.statement import (
    ATTESTATION_MEDIA_TYPE,
    IN_TOTO_PAYLOAD_TYPE,
    PREDICATE_TYPE,
    STATEMENT_TYPE,
    Subject,
)
from libs.attestation.verify import AttestationCheck, verify_attestation

__all__ = [
    "ATTESTATION_MEDIA_TYPE",
    "IN_TOTO_PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "Attestation",
    "AttestationCheck",
    "IncidentPredicate",
    "LedgerCrossCheck",
    "LedgerLink",
    "NotAttestable",
    "Subject",
    "attest_publication",
    "cross_check",
    "verify_attestation",
]
