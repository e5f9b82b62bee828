"""The incident predicate, read off the publisher's verified input event and the provenance it carries."""

from __future__ import annotations

from contracts.common import PolicyRef, WorkspaceRefs
from contracts.events.context import UpstreamRiskDetected
from contracts.events.diagnosis import DiagnosisReport
from contracts.events.repair import PatchSummary
from contracts.events.validation import ValidationReport
from contracts.meta import EventMeta
from contracts.outcomes import PUBLISHED_OUTCOME_OF
from libs.attestation.predicate import (
    Builder,
    ChainLink,
    CheckClaim,
    DiagnosisClaim,
    GateClaim,
    IncidentPredicate,
    PatchClaim,
    PolicyClaim,
    SourceEvent,
    SourceRevisions,
    UpstreamRiskClaim,
    ValidationClaim,
)
from libs.attestation.publishable import AttestablePayload, NotAttestable
from libs.attestation.subject_of import report_digest
from libs.events.codec import SignedEvent
from libs.version import MODELGUARD_VERSION

BUILDER = "modelguard"
TOP_HYPOTHESES = 3


def predicate_of(source: SignedEvent) -> IncidentPredicate:
    meta, payload = source.event.meta, source.event.payload
    if meta.event_type not in PUBLISHED_OUTCOME_OF:
        raise NotAttestable(f"a publication is never made from a {meta.event_type}; nothing to attest")
    diagnosis: DiagnosisReport | None = getattr(payload, "diagnosis", None)
    return IncidentPredicate(
        incident_id=meta.incident_id,
        outcome=PUBLISHED_OUTCOME_OF[meta.event_type],
        run_id=getattr(payload, "run_id", None),
        reason=getattr(payload, "reason", None) if not isinstance(payload, UpstreamRiskDetected) else None,
        violations=list(getattr(payload, "violations", [])),
        source=SourceEvent(
            event_id=meta.event_id,
            event_type=meta.event_type,
            producer=meta.producer,
            producer_version=meta.producer_version,
            digest=source.digest,
            occurred_at=meta.occurred_at.isoformat(),
        ),
        chain=causal_chain(source),
        policy=_policy(getattr(payload, "policy", None)),
        revisions=_revisions(getattr(payload, "workspace", None)),
        gate=GateClaim(**payload.gate.model_dump()) if hasattr(payload, "gate") else None,
        diagnosis=_diagnosis(payload, diagnosis) if diagnosis is not None else None,
        patch=_patch(getattr(payload, "patch", None)),
        validation=_validation(getattr(payload, "validation", None)),
        upstream_risk=_upstream_risk(payload) if isinstance(payload, UpstreamRiskDetected) else None,
        builder=Builder(name=BUILDER, version=MODELGUARD_VERSION),
        source_envelope=source.envelope_bytes.decode("ascii"),
    )


def causal_chain(source: SignedEvent) -> list[ChainLink]:
    """Every envelope before the source (its ancestry), then the source; the direct cause named by id."""
    meta = source.event.meta
    cause_digest = _cause_digest(meta)
    links = [ChainLink(digest=d, event_id=meta.causation_id if d == cause_digest else None) for d in meta.ancestry]
    links.append(ChainLink(digest=source.digest, event_id=meta.event_id, event_type=meta.event_type))
    return links


def _cause_digest(meta: EventMeta) -> str | None:
    """The envelope of the causing event: the one input that is also in the ancestry, when it is unambiguous."""
    candidates = [d for d in meta.input_digests if d in set(meta.ancestry)]
    return candidates[0] if meta.causation_id and len(candidates) == 1 else None


def _policy(policy: PolicyRef | None) -> PolicyClaim | None:
    return PolicyClaim(name=policy.name, sha256=policy.artifact.sha256) if policy is not None else None


def _revisions(workspace: WorkspaceRefs | None) -> SourceRevisions | None:
    if workspace is None:
        return None
    return SourceRevisions(
        model_urn=workspace.model_urn,
        repository=workspace.repository,
        pull_request=workspace.pull_request,
        base_commit=workspace.base_commit,
        candidate_commit=workspace.candidate_commit,
        base_snapshot_sha256=workspace.base_snapshot.sha256,
        candidate_snapshot_sha256=workspace.candidate_snapshot.sha256,
        data_sha256=workspace.data.sha256,
    )


def _diagnosis(payload: AttestablePayload, report: DiagnosisReport) -> DiagnosisClaim:
    return DiagnosisClaim(
        hypothesis=getattr(payload, "hypothesis", None),
        confidence=getattr(payload, "confidence", None),
        report_sha256=report_digest(report),
        invalid_values=dict(report.invalid_values),
        top_hypotheses=[
            {"name": h.name, "score": h.score, "confidence": h.confidence} for h in report.hypotheses[:TOP_HYPOTHESES]
        ],
    )


def _patch(patch: PatchSummary | None) -> PatchClaim | None:
    if patch is None:
        return None
    return PatchClaim(
        strategy=patch.strategy,
        files=list(patch.files),
        added_lines=patch.added_lines,
        removed_lines=patch.removed_lines,
        sha256=patch.artifact.sha256,
    )


def _validation(report: ValidationReport | None) -> ValidationClaim | None:
    if report is None:
        return None
    return ValidationClaim(
        passed=all(c.passed for c in report.checks),
        checks=[CheckClaim(name=c.name, passed=c.passed, values=dict(c.values)) for c in report.checks],
        metric_after_repair=report.metric_after_repair,
        invalid_values_after=report.invalid_values_after,
        tests_passed=report.tests_passed,
        tests_failed=report.tests_failed,
        source_unchanged=report.source_unchanged,
    )


def _upstream_risk(payload: UpstreamRiskDetected) -> UpstreamRiskClaim:
    return UpstreamRiskClaim(
        cause=payload.cause,
        asset_urn=payload.asset_urn,
        change_summary=payload.change_summary,
        change_fingerprint=payload.change_fingerprint,
        affected_models=sorted({a.model_urn for a in payload.affected}),
    )
