"""ModelGuard's incident predicate: which events, policy, source revisions and checks stand behind a publication.

Unknown fields are ignored on reading, so a verifier keeps working when a later minor version adds claims.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from contracts.meta import SHA256_HEX
from contracts.outcomes import PublishedOutcome


class _Claim(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class ChainLink(_Claim):
    """One envelope of the causal chain, oldest first; id and type where the attesting event can name them."""

    digest: str = Field(pattern=SHA256_HEX)
    event_id: str | None = None
    event_type: str | None = None


class SourceEvent(_Claim):
    """The event the publication was made from (the last link of the chain)."""

    event_id: str
    event_type: str
    producer: str
    producer_version: str
    digest: str = Field(pattern=SHA256_HEX)
    occurred_at: str


class PolicyClaim(_Claim):
    name: str
    sha256: str = Field(pattern=SHA256_HEX)


class SourceRevisions(_Claim):
    model_urn: str
    repository: str
    pull_request: int | None
    base_commit: str
    candidate_commit: str
    base_snapshot_sha256: str
    candidate_snapshot_sha256: str
    data_sha256: str


class GateClaim(_Claim):
    metric: str
    direction: str
    tolerance: float
    baseline: float
    candidate: float
    delta: float
    regressed: bool
    metric_source: str = "self_reported"
    """``referee``: ModelGuard computed both figures from the workspace's predictions and labels it kept back;
    ``self_reported``: the workspace's own evaluation printed them."""
    claimed_baseline: float | None = None
    claimed_candidate: float | None = None


class DiagnosisClaim(_Claim):
    hypothesis: str | None
    """A catalogue member's name, read as text: a verifier keeps reading attestations that name a hypothesis a later
    catalogue added (the signature, not this verifier's catalogue, is what vouches for it)."""
    confidence: float | None
    report_sha256: str = Field(pattern=SHA256_HEX)
    invalid_values: dict[str, int]
    top_hypotheses: list[dict[str, Any]] = Field(default_factory=list)


class PatchClaim(_Claim):
    strategy: str
    """A repair strategy's name, read as text for the same reason as the diagnosis's hypothesis."""
    files: list[str]
    added_lines: int
    removed_lines: int
    sha256: str = Field(pattern=SHA256_HEX)


class CheckClaim(_Claim):
    name: str
    passed: bool
    values: dict[str, Any] = Field(default_factory=dict)


class ValidationClaim(_Claim):
    passed: bool
    checks: list[CheckClaim]
    metric_after_repair: float | None
    invalid_values_after: int | None
    tests_passed: int
    tests_failed: int
    source_unchanged: bool


class UpstreamRiskClaim(_Claim):
    cause: str
    asset_urn: str
    change_summary: str
    change_fingerprint: str = Field(pattern=SHA256_HEX)
    affected_models: list[str]


class Builder(_Claim):
    name: str
    version: str


class IncidentPredicate(_Claim):
    incident_id: str
    outcome: PublishedOutcome
    run_id: str | None
    reason: str | None = None
    violations: list[str] = Field(default_factory=list)
    source: SourceEvent
    chain: list[ChainLink] = Field(min_length=1)
    policy: PolicyClaim | None
    revisions: SourceRevisions | None
    gate: GateClaim | None
    diagnosis: DiagnosisClaim | None
    patch: PatchClaim | None
    validation: ValidationClaim | None
    upstream_risk: UpstreamRiskClaim | None
    builder: Builder
    source_envelope: str | None = None
    """The source event's canonical envelope, signed by its producer: what lets an offline verifier check
    every claim above against a key other than the attester's."""
