"""Each service's composition root takes its ports, not Settings: ``definition(ports)`` built here with in-memory
stand-ins (``tests/support/in_memory_ports.py``) and a fixed clock, one real contract event driven through the
service's handler (or sink) and sealed as its runtime seals it (``handle_and_seal``), the produced event asserted,
and what went through the fakes asserted too."""

from __future__ import annotations

from pathlib import Path

import pytest

from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted
from contracts.events.evaluation import ClaimedMetrics, EvaluationReported, RegressionDetected
from contracts.events.publication import Published
from contracts.events.repair import RepairProposed, RepairWithheld
from libs.attestation import verify_attestation
from libs.bundle.load import Bundle, load_bundle
from libs.bus.handler_errors import RejectedInput
from libs.bus.runtime import handle_and_seal
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_store_choice import open_mirror_store
from libs.datahub.mcl.schema_registry import schema_resolver_for
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.events.identity import incident_id_for
from libs.ledger import LedgerStore
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.policy.model_policy import parse_policy
from services.context.wiring import ContextPorts
from services.context.wiring import definition as context_definition
from services.detector.gate import apply_gate
from services.detector.handler import RefereedMetrics
from services.detector.policy_catalog import LoadedPolicy
from services.detector.wiring import DetectorPorts
from services.detector.wiring import definition as detector_definition
from services.diagnoser.wiring import DiagnoserPorts
from services.diagnoser.wiring import definition as diagnoser_definition
from services.ledger.wiring import LedgerPorts
from services.ledger.wiring import definition as ledger_definition
from services.publisher.wiring import PublisherPorts
from services.publisher.wiring import definition as publisher_definition
from services.repairer.wiring import RepairerPorts
from services.repairer.wiring import definition as repairer_definition
from services.validator.wiring import ValidatorPorts
from services.validator.wiring import definition as validator_definition
from tests.support.collected_incident import context_collected
from tests.support.in_memory_ports import (
    FIXED_TIME,
    InMemoryArtifactStore,
    RecordingDataHub,
    RecordingGitHub,
    RecordingHeads,
    StaticContextProvider,
    fixed_clock,
)
from tests.support.sample_events import (
    AT,
    PRODUCERS,
    Keys,
    SampleKeys,
    abstained_incident,
    detected,
    repaired_incident,
    reported,
    workspace,
)
from tests.support.tiny_bundle import make_tiny_bundle
from tests.support.waiting import wait_until
from tests.unit.publisher.publisher_inputs import make_keys, signed, validated_payload


def _sealed_by(signed_event: SignedEvent, definition, key) -> SignedEvent:  # type: ignore[no-untyped-def]
    (output,) = handle_and_seal(definition, key, signed_event)
    return output


class OnePolicy:
    """A ``PolicySource`` with one policy for every model, and the models it was asked about."""

    def __init__(self, loaded: LoadedPolicy) -> None:
        self.loaded, self.asked = loaded, []  # type: ignore[var-annotated]

    def policy_for(self, model_urn: str) -> LoadedPolicy | None:
        self.asked.append(model_urn)
        return self.loaded


def test_the_detector_gates_on_its_referee_port_and_stores_the_policy_in_its_artifact_port(tmp_path: Path) -> None:
    bundle = load_bundle(make_tiny_bundle(tmp_path / "bundle"))
    raw = effective_policy_bytes(bundle, read_central_policy())
    policies = OnePolicy(LoadedPolicy(parse_policy(raw, bundle.name), raw, "test"))
    refereed: list[str] = []

    def referee(evaluation: EvaluationReported, policy: object) -> RefereedMetrics:
        refereed.append(evaluation.run_id)
        return RefereedMetrics(baseline={"accuracy": 0.9}, candidate={"accuracy": 0.7})

    artifacts = InMemoryArtifactStore()
    keys = Keys("reporter", "detector")
    # the CI claims no regression; the referee's own figures are the ones gated on
    payload = EvaluationReported(
        run_id="run-1",
        workspace=workspace(),
        claimed=ClaimedMetrics(baseline={"accuracy": 0.9}, candidate={"accuracy": 0.9}),
        evaluation_command=["python", "evaluate.py"],
    )
    incident = incident_id_for(payload.workspace.model_urn, payload.workspace.candidate_commit, "accuracy")
    event = next_event(payload, producer="reporter", producer_version="t", occurred_at=AT, incident_id=incident)
    service = detector_definition(DetectorPorts(artifacts, policies, referee, clock=fixed_clock))

    output = _sealed_by(seal(event, keys["reporter"]), service, keys["detector"])

    detection = output.event.payload
    assert isinstance(detection, RegressionDetected)
    assert (detection.gate.baseline, detection.gate.candidate, detection.gate.regressed) == (0.9, 0.7, True)
    assert artifacts.get(detection.policy.artifact) == raw
    assert refereed == ["run-1"] and policies.asked == [payload.workspace.model_urn]
    assert output.event.meta.occurred_at == FIXED_TIME and output.event.meta.producer == "detector"


def test_the_context_service_asks_its_provider_port(tmp_path: Path) -> None:
    keys = Keys("reporter", "detector", "context")
    regression = detected(keys, reported(keys))
    snapshot = ContextSnapshot(model_urn=workspace().model_urn, provider="memory", fetched_at=AT.isoformat())
    provider = StaticContextProvider(snapshot)
    ports = ContextPorts(
        provider=provider,
        mirror=MetadataMirror(open_mirror_store(None, tmp_path)),
        schemas=schema_resolver_for(None),
        clock=fixed_clock,
    )

    output = _sealed_by(regression, context_definition(ports), keys["context"])

    collected = output.event.payload
    assert isinstance(collected, ContextCollected)
    assert collected.context is not None and collected.context.provider == "memory"
    assert provider.asked == [(workspace().model_urn, regression.event.meta.occurred_at.isoformat())]
    assert output.event.meta.occurred_at == FIXED_TIME


def _collected_in(bundle: Bundle, artifacts: InMemoryArtifactStore, repo_dir: Path) -> ContextCollected:
    """The tiny bundle's incident as the context service hands it on, its trees, data and policy in ``artifacts``."""
    return context_collected(
        bundle, artifacts, repo_dir, apply_gate(bundle.spec.gate, {"accuracy": 0.9}, {"accuracy": 0.5})
    )


def test_the_diagnoser_reads_the_incident_from_its_artifact_port(tmp_path: Path) -> None:
    artifacts = InMemoryArtifactStore()
    collected = _collected_in(load_bundle(make_tiny_bundle(tmp_path / "bundle")), artifacts, tmp_path / "repo")
    keys = Keys("reporter", "context", "diagnoser")
    event = next_event(collected, producer="context", producer_version="t", occurred_at=AT, causes=[reported(keys)])
    scratch = tmp_path / "scratch"
    service = diagnoser_definition(DiagnoserPorts(artifacts, scratch, evaluations=None, clock=fixed_clock))

    output = _sealed_by(seal(event, keys["context"]), service, keys["diagnoser"])

    diagnosis = output.event.payload
    assert isinstance(diagnosis, DiagnosisCompleted | DiagnosisAbstained)
    assert diagnosis.workspace == collected.workspace and diagnosis.report.evidence
    assert output.event.meta.occurred_at == FIXED_TIME
    # the trees were extracted into the scratch port and removed after (off the handling, on the removal thread)
    assert wait_until(lambda: not any(scratch.iterdir()), 30)


def test_the_repairer_withholds_after_an_abstention_and_reads_trees_only_from_its_artifact_port(
    tmp_path: Path,
) -> None:
    keys = SampleKeys.generate([*PRODUCERS, "repairer"])
    abstained = abstained_incident(keys, "ports")[-1]
    diagnosed = next(e for e in repaired_incident(keys, "ports") if e.event.meta.event_type == "DiagnosisCompleted")
    service = repairer_definition(RepairerPorts(InMemoryArtifactStore(), tmp_path / "scratch", clock=fixed_clock))

    output = _sealed_by(abstained, service, keys.keys["repairer"])

    assert isinstance(output.event.payload, RepairWithheld) and output.event.meta.occurred_at == FIXED_TIME
    with pytest.raises(RejectedInput, match=r"^inputs-unavailable"):  # its trees are in no store it was handed
        handle_and_seal(service, keys.keys["repairer"], diagnosed)


def test_the_validator_reads_the_patch_and_trees_only_from_its_artifact_port(tmp_path: Path) -> None:
    keys = SampleKeys.generate([*PRODUCERS, "validator"])
    proposed = next(e for e in repaired_incident(keys, "ports") if e.event.meta.event_type == "RepairProposed")
    assert isinstance(proposed.event.payload, RepairProposed)
    service = validator_definition(ValidatorPorts(InMemoryArtifactStore(), tmp_path / "scratch", clock=fixed_clock))

    with pytest.raises(RejectedInput, match=r"^inputs-unavailable"):
        handle_and_seal(service, keys.keys["validator"], proposed)


def test_the_publisher_publishes_through_its_channel_ports_and_attests_into_its_artifact_port() -> None:
    keys = make_keys()
    github, datahub, artifacts = RecordingGitHub(), RecordingDataHub(), InMemoryArtifactStore()
    service = publisher_definition(PublisherPorts(github, datahub, artifacts, clock=fixed_clock), keys["publisher"])

    output = _sealed_by(signed(keys, validated_payload()), service, keys["publisher"])

    published = output.event.payload
    assert isinstance(published, Published) and published.attestation is not None
    assert verify_attestation(artifacts.get(published.attestation), keys.registry).ok
    assert len(github.published) == 1 and len(datahub.incidents) == 1
    assert [c.channel for c in published.channels].count("github") == 1
    assert output.event.meta.occurred_at == FIXED_TIME


def test_the_ledger_appends_to_its_store_port_and_records_each_seal_in_its_head_ports(tmp_path: Path) -> None:
    keys = SampleKeys.generate([*PRODUCERS, "ledger"])
    events = abstained_incident(keys, "ports")
    heads = RecordingHeads()
    with LedgerStore(f"sqlite:///{tmp_path / 'ledger.sqlite'}") as store:
        store.create_schema()
        service = ledger_definition(LedgerPorts(store, (heads,), checkpoint_interval_s=3600), keys.keys["ledger"])
        for event in events:
            assert handle_and_seal(service, keys.keys["ledger"], event) == []
        assert store.count() == len(events)
        assert service.on_stop is not None
        service.on_stop()  # a graceful stop seals what was appended since the last checkpoint

        assert heads.heads and heads.heads[-1].position == len(events)
        assert store.latest_checkpoint() == heads.heads[-1]  # each seal's head went to the head port
