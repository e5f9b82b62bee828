"""Synthetic, fully signed incidents for the ledger's benchmarks (`make bench`) and, through
`tests/support/sample_events.py`, its tests.

The payloads are valid contracts with fake-but-well-formed commits and artifact digests; the chains
are wired exactly as services wire them, through `next_event`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

from contracts.common import ArtifactRef, GateResult, PolicyRef, WorkspaceRefs
from contracts.events.diagnosis import (
    DiagnosisAbstained,
    DiagnosisCompleted,
    DiagnosisReport,
    EvidenceItem,
    RankedHypothesis,
    Suspect,
)
from contracts.events.evaluation import ClaimedMetrics, EvaluationPassed, EvaluationReported, RegressionDetected
from contracts.events.publication import ChannelResult, Published
from contracts.events.repair import PatchSummary, RepairProposed
from contracts.events.validation import RepairValidated, ValidationCheck, ValidationReport
from libs.canonical_json import sha256_hex
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.events.identity import incident_id_for
from libs.signing.keys import KeyRegistry, RegisteredKey, SigningKey, generate_key

PRODUCERS = ("detector", "context", "diagnoser", "repairer", "validator", "publisher")
START = datetime(2025, 1, 1, tzinfo=UTC)
MODEL_URN = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn_model,PROD)"


@dataclass(frozen=True)
class SampleKeys:
    keys: dict[str, SigningKey]
    registry: KeyRegistry

    @classmethod
    def generate(cls, producers: Sequence[str] = PRODUCERS) -> SampleKeys:
        keys = {p: generate_key(p) for p in producers}
        registry = KeyRegistry([RegisteredKey(k.keyid, p, k.private_key.public_key()) for p, k in keys.items()])
        return cls(keys, registry)


def sample_incident_id(name: str) -> str:
    return incident_id_for("ledger-sample", name)


def _artifact(name: str, media_type: str = "application/gzip") -> ArtifactRef:
    return ArtifactRef(sha256=sha256_hex(name.encode()), media_type=media_type, size=len(name) * 100)


def _workspace(model_urn: str) -> WorkspaceRefs:
    return WorkspaceRefs(
        model_urn=model_urn,
        repository="https://github.com/example/churn-model",
        base_commit=sha256_hex(b"base")[:40],
        candidate_commit=sha256_hex(b"candidate")[:40],
        base_snapshot=_artifact("base-snapshot"),
        candidate_snapshot=_artifact("candidate-snapshot"),
        data=_artifact("data", "text/csv"),
    )


def _gate(baseline: float, candidate: float) -> GateResult:
    delta = round(candidate - baseline, 6)
    return GateResult(
        metric="roc_auc",
        direction="higher_is_better",
        tolerance=0.01,
        baseline=baseline,
        candidate=candidate,
        delta=delta,
        regressed=delta < -0.01,
    )


_POLICY = PolicyRef(name="default", artifact=_artifact("policy", "application/yaml"))


def _report() -> DiagnosisReport:
    return DiagnosisReport(
        evidence=[
            EvidenceItem(
                evidence_id="ev-1",
                kind="invalid_values",
                summary="tenure_days has negative values on the candidate",
                values={"base": 0, "candidate": 412},
                source="data",
            ),
            EvidenceItem(evidence_id="ev-2", kind="code_diff", summary="clip removed", source="code"),
        ],
        hypotheses=[
            RankedHypothesis(
                name="feature_transformation",
                score=0.82,
                confidence="high",
                supporting=["ev-1", "ev-2"],
                counter=[],
                explanation="the candidate stopped clipping tenure_days",
            ),
            RankedHypothesis(
                name="upstream_schema_change",
                score=0.21,
                confidence="low",
                supporting=[],
                counter=["ev-2"],
                explanation="no schema change upstream",
            ),
        ],
        invalid_values={"base": 0, "candidate": 412},
        suspect=Suspect(file="features.py", function="build_features"),
        context_digest=sha256_hex(b"context"),
    )


def _patch() -> PatchSummary:
    return PatchSummary(
        strategy="guarded_division",
        files=["features.py"],
        added_lines=1,
        removed_lines=0,
        diff="--- a/features.py\n+++ b/features.py\n+    x = max(x, 0)\n",
        artifact=_artifact("patch", "text/x-diff"),
    )


class _Chain:
    """Appends events to one incident the way services do: each next event caused by the last one."""

    def __init__(self, keys: SampleKeys, incident_id: str, start: datetime) -> None:
        self.keys, self.incident_id, self.at = keys, incident_id, start
        self.events: list[SignedEvent] = []

    def add(self, producer: str, payload: BaseModel, extra_inputs: Sequence[str] = ()) -> SignedEvent:
        self.at += timedelta(seconds=1)
        event = next_event(
            payload,
            producer=producer,
            producer_version="0.1.0",
            occurred_at=self.at,
            causes=self.events[-1:],
            incident_id=self.incident_id,
            extra_input_digests=extra_inputs,
        )
        signed = seal(event, self.keys.keys[producer])
        self.events.append(signed)
        return signed


def _detect(chain: _Chain, run_id: str, model_urn: str, baseline: float, candidate: float) -> None:
    workspace = _workspace(model_urn)
    chain.add(
        "detector",
        EvaluationReported(
            run_id=run_id,
            workspace=workspace,
            claimed=ClaimedMetrics(baseline={"roc_auc": baseline}, candidate={"roc_auc": candidate}),
            evaluation_command=["python", "evaluate.py"],
        ),
        extra_inputs=[sha256_hex(run_id.encode())],
    )
    gate = _gate(baseline, candidate)
    verdict = RegressionDetected if gate.regressed else EvaluationPassed
    chain.add("detector", verdict(run_id=run_id, workspace=workspace, policy=_POLICY, gate=gate))


def _published(chain: _Chain, run_id: str, outcome: str, source: str, status: str = "created") -> None:
    channels = [
        ChannelResult(
            channel=channel,
            status=status,
            target=target,
            identifier=f"{channel}-{chain.incident_id}",
            content_digest=sha256_hex(f"{channel}{outcome}".encode()),
            dry_run=True,
        )
        for channel, target in (("github", "example/churn-model"), ("datahub", MODEL_URN))
    ]
    chain.add("publisher", Published(run_id=run_id, outcome=outcome, source_event_type=source, channels=channels))


def repaired_incident(
    keys: SampleKeys, name: str, *, after_repair: float = 0.90, start: datetime = START
) -> list[SignedEvent]:
    """Detect, diagnose, repair, validate, publish: six events."""
    chain, run_id = _Chain(keys, sample_incident_id(name), start), f"ci-{name}"
    _detect(chain, run_id, MODEL_URN, 0.91, 0.84)
    workspace, gate, report, patch = _workspace(MODEL_URN), _gate(0.91, 0.84), _report(), _patch()
    common = {"run_id": run_id, "workspace": workspace, "policy": _POLICY, "gate": gate}
    hypothesis = {"hypothesis": "feature_transformation", "confidence": 0.82}
    chain.add("diagnoser", DiagnosisCompleted(**common, report=report, **hypothesis))
    chain.add("repairer", RepairProposed(**common, diagnosis=report, **hypothesis, patch=patch))
    validation = ValidationReport(
        checks=[ValidationCheck(name="metric", passed=True, values={"roc_auc": after_repair})],
        metric_after_repair=after_repair,
        invalid_values_after=0,
        tests_passed=12,
        tests_failed=0,
        source_unchanged=True,
    )
    chain.add(
        "validator", RepairValidated(**common, diagnosis=report, **hypothesis, patch=patch, validation=validation)
    )
    _published(chain, run_id, "repair_validated", "RepairValidated")
    return chain.events


def abstained_incident(keys: SampleKeys, name: str, *, start: datetime = START) -> list[SignedEvent]:
    """Detect, then the diagnoser abstains: three events, nothing published yet."""
    chain, run_id = _Chain(keys, sample_incident_id(name), start), f"ci-{name}"
    _detect(chain, run_id, MODEL_URN, 0.91, 0.80)
    common = {"run_id": run_id, "workspace": _workspace(MODEL_URN), "policy": _POLICY, "gate": _gate(0.91, 0.80)}
    chain.add("diagnoser", DiagnosisAbstained(**common, report=_report(), reason="two causes are close"))
    return chain.events


def passed_incident(
    keys: SampleKeys, name: str, *, start: datetime = START, run_id: str | None = None
) -> list[SignedEvent]:
    """An evaluation within tolerance: two events (another ``run_id``: a CI retry of the same incident)."""
    chain = _Chain(keys, sample_incident_id(name), start)
    _detect(chain, run_id or f"ci-{name}", MODEL_URN, 0.91, 0.905)
    return chain.events


def independent_events(keys: SampleKeys, name: str, count: int, *, start: datetime = START) -> list[SignedEvent]:
    """`count` evaluation reports of one incident with distinct ids and no causal links between them,
    so they may be appended in any order (what concurrent appenders need)."""
    incident_id, events = sample_incident_id(name), []
    for i in range(count):
        run_id = f"ci-{name}-{i}"
        event = next_event(
            EvaluationReported(
                run_id=run_id,
                workspace=_workspace(MODEL_URN),
                claimed=ClaimedMetrics(baseline={"roc_auc": 0.91}, candidate={"roc_auc": 0.84}),
                evaluation_command=["python", "evaluate.py"],
            ),
            producer="detector",
            producer_version="0.1.0",
            occurred_at=start + timedelta(seconds=i),
            incident_id=incident_id,
            extra_input_digests=[sha256_hex(run_id.encode())],
        )
        events.append(seal(event, keys.keys["detector"]))
    return events
