"""Which events a publication can be attested for, and the outcome each one stands for."""

from __future__ import annotations

from contracts.events.context import UpstreamRiskDetected
from contracts.events.repair import RepairWithheld
from contracts.events.validation import RepairValidated, ValidationFailed

AttestablePayload = RepairValidated | ValidationFailed | RepairWithheld | UpstreamRiskDetected

OUTCOMES: dict[str, str] = {
    "RepairValidated": "repair_validated",
    "ValidationFailed": "validation_failed",
    "RepairWithheld": "repair_withheld",
    "UpstreamRiskDetected": "upstream_risk",
}


class NotAttestable(ValueError):
    """The event is not one a publication is made from."""
