"""Which role may sign what. The key registry binds each key to one owner (its role); these are the roles
whose keys may sign an attestation and each event type an attestation's chain can hold."""

from __future__ import annotations

ATTESTER_ROLE = "publisher"

PRODUCER_ROLES: dict[str, frozenset[str]] = {
    "EvaluationReported": frozenset({"reporter", "detector"}),
    "EvaluationPassed": frozenset({"detector"}),
    "EnvironmentFailed": frozenset({"detector"}),
    "RegressionDetected": frozenset({"detector"}),
    "ContextCollected": frozenset({"context"}),
    "UpstreamRiskDetected": frozenset({"context"}),
    "DiagnosisCompleted": frozenset({"diagnoser"}),
    "DiagnosisAbstained": frozenset({"diagnoser"}),
    "RepairProposed": frozenset({"repairer"}),
    "RepairWithheld": frozenset({"repairer"}),
    "RepairValidated": frozenset({"validator"}),
    "ValidationFailed": frozenset({"validator"}),
    "Published": frozenset({"publisher"}),
}


def role_problem(event_type: str, signer: str) -> str | None:
    """Why a key of role `signer` may not sign a `event_type`; None when it may. Unknown types are refused."""
    allowed = PRODUCER_ROLES.get(event_type)
    if allowed is None:
        return f"no role is registered to sign a {event_type[:80]}"
    if signer not in allowed:
        return f"a {event_type} is signed by a {signer} key; only {' or '.join(sorted(allowed))} signs one"
    return None
