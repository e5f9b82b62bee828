"""Which events a publication can be attested for (``contracts.outcomes.PUBLISHED_OUTCOME_OF`` says the outcome each
one stands for)."""

from __future__ import annotations

from contracts.events.context import UpstreamRiskDetected
from contracts.events.repair import RepairWithheld
from contracts.events.validation import RepairValidated, ValidationFailed

AttestablePayload = RepairValidated | ValidationFailed | RepairWithheld | UpstreamRiskDetected


class NotAttestable(ValueError):
    """The event is not one a publication is made from."""
