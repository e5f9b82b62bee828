"""Which contract each service consumes and produces, declared once: each service's wiring passes its entry to its
``ServiceDefinition``, whose runtime dead-letters an input of another type and the input of a handler that makes an
event of a type not declared here (``libs/bus/runtime.py``); the AsyncAPI documents are generated from it
(``contracts/asyncapi.py``). Every service may also dead-letter what it cannot process.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts.registry import CONTRACTS


@dataclass(frozen=True)
class ServiceChannels:
    description: str
    consumes: tuple[str, ...] = ()
    produces: tuple[str, ...] = ()
    external: tuple[str, ...] = ()  # non-ModelGuard topics it reads (DataHub's MetadataChangeLog)


DATAHUB_MCL_TOPICS = ("MetadataChangeLog_Versioned_v1", "MetadataChangeLog_Timeseries_v1")

SERVICE_CHANNELS: dict[str, ServiceChannels] = {
    "reporter": ServiceChannels(
        "The model's CI: `modelguard submit`, or the detector's POST /evaluations on its behalf",
        produces=("EvaluationReported",),
    ),
    "detector": ServiceChannels(
        "Applies the model's policy gate to an evaluation; serves CI its verdicts (it reads the dead-letter topic)",
        consumes=("EvaluationReported",),
        produces=("RegressionDetected", "EvaluationPassed", "EnvironmentFailed"),
    ),
    "context": ServiceChannels(
        "Collects DataHub context for a regression; mirrors DataHub's metadata changes and reports upstream risk",
        consumes=("RegressionDetected",),
        produces=("ContextCollected", "UpstreamRiskDetected"),
        external=DATAHUB_MCL_TOPICS,
    ),
    "diagnoser": ServiceChannels(
        "Ranks hypotheses on computed evidence, or abstains",
        consumes=("ContextCollected",),
        produces=("DiagnosisCompleted", "DiagnosisAbstained"),
    ),
    "repairer": ServiceChannels(
        "Proposes the smallest repair a named strategy allows, or withholds one",
        consumes=("DiagnosisCompleted", "DiagnosisAbstained"),
        produces=("RepairProposed", "RepairWithheld"),
    ),
    "validator": ServiceChannels(
        "Validates a proposed repair in an isolated copy",
        consumes=("RepairProposed",),
        produces=("RepairValidated", "ValidationFailed"),
    ),
    "publisher": ServiceChannels(
        "Publishes once to GitHub and DataHub, with a signed attestation",
        consumes=("RepairValidated", "ValidationFailed", "RepairWithheld", "UpstreamRiskDetected"),
        produces=("Published",),
    ),
    "ledger": ServiceChannels(
        "Appends every event to the hash-chained incident log", consumes=tuple(sorted(CONTRACTS))
    ),
}
