"""What an attestation is about: the patch, else the diagnosis report, else the upstream change."""

from __future__ import annotations

from contracts.events.context import UpstreamRiskDetected
from contracts.events.diagnosis import DiagnosisReport
from libs.attestation.publishable import AttestablePayload
from libs.attestation.statement import Subject
from libs.canonical_json import canonical_bytes, sha256_hex


def report_digest(report: DiagnosisReport) -> str:
    """sha256 of the diagnosis report's canonical JSON, as it travels in the events."""
    return sha256_hex(canonical_bytes(report.model_dump(mode="json")))


def subject_of(incident_id: str, payload: AttestablePayload) -> Subject:
    patch = getattr(payload, "patch", None)
    if patch is not None:
        return Subject(name=",".join(patch.files) or "patch", digest={"sha256": patch.artifact.sha256})
    if isinstance(payload, UpstreamRiskDetected):
        return Subject(name=payload.asset_urn, digest={"sha256": payload.change_fingerprint})
    return Subject(name=f"{incident_id}/diagnosis-report.json", digest={"sha256": report_digest(payload.diagnosis)})
