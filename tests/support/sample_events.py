"""Valid events for tests: real payload models, real keys, real signatures.

Whole incidents (six, three or two events, chained as the services chain them) come from the benchmark's
generator, `modelguard.synthetic_incidents`, re-exported here so that tests and benchmarks sign the same events.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

from contracts.common import ArtifactRef, GateResult, PolicyRef, WorkspaceRefs
from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from contracts.events.evaluation import ClaimedMetrics, EvaluationReported, RegressionDetected
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.events.identity import incident_id_for
from libs.signing.keys import SigningKey
from modelguard.synthetic_incidents import (
    MODEL_URN,
    PRODUCERS,
    START,
    SampleKeys,
    abstained_incident,
    independent_events,
    passed_incident,
    repaired_incident,
    sample_incident_id,
)

__all__ = [
    "AT",
    "MODEL_URN",
    "PRODUCERS",
    "START",
    "Keys",
    "SampleKeys",
    "abstained_incident",
    "artifact",
    "collected",
    "detected",
    "evaluation",
    "gate",
    "independent_events",
    "passed_incident",
    "repaired_incident",
    "reported",
    "sample_incident_id",
    "workspace",
]

AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
REPAIRED_INCIDENT_EVENTS = (
    "EvaluationReported",
    "RegressionDetected",
    "ContextCollected",
    "DiagnosisCompleted",
    "RepairProposed",
    "RepairValidated",
    "Published",
)
"""The event types of an incident whose repair is validated and published, in the order they are published."""


def artifact(content: bytes, media_type: str = "application/octet-stream") -> ArtifactRef:
    return ArtifactRef(sha256=hashlib.sha256(content).hexdigest(), media_type=media_type, size=len(content))


def workspace(seed: str = "a") -> WorkspaceRefs:
    return WorkspaceRefs(
        model_urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)",
        repository="acme/churn-model",
        pull_request=7,
        base_commit=hashlib.sha1(f"base-{seed}".encode()).hexdigest(),
        candidate_commit=hashlib.sha1(f"candidate-{seed}".encode()).hexdigest(),
        base_snapshot=artifact(f"base-{seed}".encode(), "application/x-tar"),
        candidate_snapshot=artifact(f"candidate-{seed}".encode(), "application/x-tar"),
        data=artifact(f"data-{seed}".encode(), "text/csv"),
    )


def evaluation(
    run_id: str = "run-1", seed: str = "a", baseline: float = 0.8, candidate: float = 0.7
) -> EvaluationReported:
    return EvaluationReported(
        run_id=run_id,
        workspace=workspace(seed),
        claimed=ClaimedMetrics(baseline={"f1": baseline}, candidate={"f1": candidate}),
        evaluation_command=["python", "evaluate.py"],
    )


def gate(baseline: float = 0.8, candidate: float = 0.7) -> GateResult:
    return GateResult(
        metric="f1",
        direction="higher_is_better",
        tolerance=0.02,
        baseline=baseline,
        candidate=candidate,
        delta=candidate - baseline,
        regressed=baseline - candidate > 0.02,
    )


class Keys(SampleKeys):
    """One real Ed25519 key per producer and the registry of their public halves: `Keys("reporter", "detector")`."""

    def __init__(self, *owners: str) -> None:
        generated = SampleKeys.generate(owners)
        super().__init__(generated.keys, generated.registry)

    def __getitem__(self, owner: str) -> SigningKey:
        return self.keys[owner]


def reported(keys: Keys, run_id: str = "run-1", seed: str = "a") -> SignedEvent:
    payload = evaluation(run_id, seed)
    incident = incident_id_for(payload.workspace.model_urn, payload.workspace.candidate_commit, "f1")
    event = next_event(
        payload,
        producer="reporter",
        producer_version="test",
        occurred_at=AT,
        incident_id=incident,
        extra_input_digests=[hashlib.sha256(run_id.encode()).hexdigest()],
    )
    return seal(event, keys["reporter"])


def detected(keys: Keys, cause: SignedEvent) -> SignedEvent:
    payload = RegressionDetected(
        run_id=cause.event.payload.run_id,
        workspace=cause.event.payload.workspace,
        policy=PolicyRef(name="churn", artifact=artifact(b"policy", "application/yaml")),
        gate=gate(),
    )
    event = next_event(payload, producer="detector", producer_version="test", occurred_at=AT, causes=[cause])
    return seal(event, keys["detector"])


def collected(context: ContextSnapshot | None = None) -> ContextCollected:
    """The diagnoser's input for the toy model: its workspace and gate, and ``context`` (else an empty snapshot)."""
    context = context or ContextSnapshot(
        model_urn="urn:li:mlModel:m", provider="file", fetched_at="2025-01-01T00:00:00+00:00"
    )
    return ContextCollected(
        run_id="run-1",
        workspace=workspace(),
        policy=PolicyRef(name="toy", artifact=artifact(b"policy")),
        gate=gate(),
        context=context,
        context_digest=context.digest().removeprefix("sha256:"),
    )
