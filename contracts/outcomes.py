"""How an incident ends, and where a run or an incident stands, named once.

One vocabulary for the end, :class:`Outcome`: what ``modelguard investigate`` exits with, what the CI policy
maps to pass or fail, what the detector's verdict and the ledger's read model say an incident came to, what a
publication and its attestation report. Three narrower vocabularies say something else and are written in its
words where they can be:

- :data:`PublishedOutcome`: the outcomes a publication is made for (``Published.outcome``);
- :class:`PublicationState`: what people are told (notifications, the DataHub incident's stage): the published
  outcome, with a diagnosis that abstained told apart from a repair withheld;
- :class:`RunStatus`: where one CI run stands, as the detector's verdict answers the CI;
- :class:`IncidentStatus`: where an incident stands in the ledger's read model.

Each is a ``StrEnum``: its members are the strings events and answers have always carried, so stored envelopes,
their canonical JSON and their signatures are unchanged.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal


class Outcome(StrEnum):
    """How an incident ended. The first seven end a CI run (:data:`RUN_OUTCOMES`, docs/scenarios.md "Outcomes");
    ``upstream_risk`` ends an incident DataHub opened."""

    GATE_PASSED = "gate_passed"
    REPAIR_VALIDATED = "repair_validated"
    REPAIR_WITHHELD = "repair_withheld"
    VALIDATION_FAILED = "validation_failed"
    NO_CODE_REPAIR = "no_code_repair"
    ABSTAINED = "abstained"
    ENVIRONMENT_FAILED = "environment_failed"
    UPSTREAM_RISK = "upstream_risk"


RUN_OUTCOMES: tuple[Outcome, ...] = tuple(outcome for outcome in Outcome if outcome is not Outcome.UPSTREAM_RISK)
"""The outcomes of one CI run: each has an exit code and a key in the CI policy."""

PublishedOutcome = Literal[
    Outcome.REPAIR_VALIDATED, Outcome.VALIDATION_FAILED, Outcome.REPAIR_WITHHELD, Outcome.UPSTREAM_RISK
]
"""What a publication reports: a diagnosis that abstained, and a cause in the data, publish as a withheld repair."""

PUBLISHED_OUTCOME_OF: dict[str, PublishedOutcome] = {
    "RepairValidated": Outcome.REPAIR_VALIDATED,
    "ValidationFailed": Outcome.VALIDATION_FAILED,
    "RepairWithheld": Outcome.REPAIR_WITHHELD,
    "UpstreamRiskDetected": Outcome.UPSTREAM_RISK,
}
"""The event a publication is made from -> the outcome it reports."""


class PublicationState(StrEnum):
    """What a publication tells people: its outcome, or ``repair_abstained`` for a withheld repair whose diagnosis
    abstained (no hypothesis was named)."""

    REPAIR_VALIDATED = Outcome.REPAIR_VALIDATED.value
    VALIDATION_FAILED = Outcome.VALIDATION_FAILED.value
    REPAIR_WITHHELD = Outcome.REPAIR_WITHHELD.value
    REPAIR_ABSTAINED = "repair_abstained"
    UPSTREAM_RISK = Outcome.UPSTREAM_RISK.value


def publication_state(outcome: PublishedOutcome, abstained: bool) -> PublicationState:
    return PublicationState.REPAIR_ABSTAINED if abstained else PublicationState(outcome.value)


class RunStatus(StrEnum):
    """Where one CI run of an incident stands (the detector's verdict; the GitHub Action reads it)."""

    PENDING = "pending"
    """Reported; the gate is not applied yet."""
    REGRESSED = "regressed"
    """The gate failed; the investigation is under way."""
    PUBLISHED = "published"
    PASSED = "passed"
    """The gate passed (outcome ``gate_passed``)."""
    ENVIRONMENT_FAILED = Outcome.ENVIRONMENT_FAILED.value
    DEAD_LETTERED = "dead_lettered"
    """A service refused an input of the run: nothing more will happen."""
    STUCK = "stuck"
    """Nothing happened for longer than the stuck limit."""


FINISHED_RUN_STATUSES = frozenset(
    {RunStatus.PUBLISHED, RunStatus.PASSED, RunStatus.ENVIRONMENT_FAILED, RunStatus.DEAD_LETTERED, RunStatus.STUCK}
)
"""The CI can stop waiting."""


class IncidentStatus(StrEnum):
    """Where an incident stands in the ledger's read model: the phase that stopped it, ``published`` once a
    publication went out for an incident nothing stopped, ``open`` otherwise."""

    OPEN = "open"
    PASSED = "passed"
    """The gate passed (outcome ``gate_passed``)."""
    ENVIRONMENT_FAILED = Outcome.ENVIRONMENT_FAILED.value
    ABSTAINED = Outcome.ABSTAINED.value
    WITHHELD = "withheld"
    """The repairer withheld a repair (outcome ``repair_withheld`` or ``no_code_repair``)."""
    VALIDATION_FAILED = Outcome.VALIDATION_FAILED.value
    PUBLISHED = "published"
