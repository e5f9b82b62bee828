"""What a verified attestation proves, in sentences a reviewer can check against the ledger and the repository."""

from __future__ import annotations

from typing import TYPE_CHECKING

from libs.attestation.predicate import GateClaim, IncidentPredicate, SourceRevisions, ValidationClaim

if TYPE_CHECKING:
    from libs.attestation.verify import AttestationCheck


def describe(check: AttestationCheck) -> list[str]:
    p = check.predicate
    if p is None:
        return []
    lines = [
        f"signed by {check.signer} with key {check.keyid}; attestation sha256 {check.digest}",
        *(f"subject {s.name} sha256 {s.sha256}" for s in check.subject),
        f"incident {p.incident_id}" + (f" run {p.run_id}" if p.run_id else "") + f": outcome {p.outcome}",
        _chain(p),
        f"{check.chain_verified} of {len(p.chain)} chain envelope(s) verified offline, each signed by a key of its "
        "producer's role; the claims are the source event's own",
    ]
    if p.policy is not None:
        lines.append(f"policy {p.policy.name} sha256 {p.policy.sha256}")
    if p.revisions is not None:
        lines.append(_revisions(p.revisions))
    if p.gate is not None:
        lines.append(_gate(p.gate))
    if p.diagnosis is not None:
        d = p.diagnosis
        invalid = ", ".join(f"{k} {v}" for k, v in sorted(d.invalid_values.items()))
        lines.append(
            f"diagnosis {d.hypothesis or 'none'}"
            + (f" (confidence {d.confidence})" if d.confidence is not None else "")
            + f"; invalid feature values: {invalid or 'not counted'}; report sha256 {d.report_sha256}"
        )
    if p.patch is not None:
        lines.append(
            f"patch {p.patch.strategy} on {', '.join(p.patch.files)} (+{p.patch.added_lines} -{p.patch.removed_lines})"
        )
    if p.validation is not None:
        lines.append(_validation(p.validation, p.gate))
    if p.upstream_risk is not None:
        u = p.upstream_risk
        lines.append(f"upstream {u.cause} on {u.asset_urn}: {len(u.affected_models)} model(s) at risk")
    if p.reason:
        lines.append(f"reason: {p.reason}" + (f" ({'; '.join(p.violations)})" if p.violations else ""))
    lines.append(f"produced by {p.builder.name} {p.builder.version}")
    return lines


def _chain(p: IncidentPredicate) -> str:
    return (
        f"causal chain of {len(p.chain)} signed event(s), oldest first, ending in {p.source.event_type} "
        f"{p.source.event_id} by {p.source.producer} at {p.source.occurred_at}"
    )


def _revisions(r: SourceRevisions) -> str:
    pull = f" pull request #{r.pull_request}" if r.pull_request else ""
    return (
        f"source {r.repository}{pull}: base {r.base_commit[:12]} -> candidate {r.candidate_commit[:12]}; "
        f"snapshots sha256 {r.base_snapshot_sha256[:16]}.. / {r.candidate_snapshot_sha256[:16]}..; "
        f"data sha256 {r.data_sha256[:16]}..; model {r.model_urn}"
    )


def _gate(g: GateClaim) -> str:
    verdict = "regressed" if g.regressed else "held"
    source = METRIC_SOURCE.get(g.metric_source, g.metric_source)
    return (
        f"gate {g.metric} {g.baseline:.4f} -> {g.candidate:.4f} (tolerance {g.tolerance}, {g.direction}): {verdict}; "
        f"{source}"
    )


METRIC_SOURCE = {
    "referee": "metric computed by ModelGuard from the predictions against the labels it kept back",
    "self_reported": "self-reported metric: printed by the workspace's own evaluation, not computed by ModelGuard",
}


def _validation(v: ValidationClaim, gate: GateClaim | None) -> str:
    passed = sum(c.passed for c in v.checks)
    metric = gate.metric if gate is not None else "metric"
    after = "not measured" if v.metric_after_repair is None else f"{v.metric_after_repair:.4f}"
    return (
        f"validation {'passed' if v.passed else 'FAILED'} ({passed}/{len(v.checks)} checks"
        + (f"; failed: {', '.join(c.name for c in v.checks if not c.passed)}" if not v.passed else "")
        + f"): {metric} after repair {after}; tests {v.tests_passed} passed, {v.tests_failed} failed; "
        f"invalid values after {v.invalid_values_after}; source {'unchanged' if v.source_unchanged else 'CHANGED'}"
    )
