"""A candidate whose feature code cannot even run is a finding for a person, not a dead letter: the
diagnoser's wiring abstains with the command's failure as evidence, and the same failure always hashes the
same (scratch paths are taken out)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from contracts.common import PolicyRef, WorkspaceRefs
from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from libs.artifacts.store import LocalArtifactStore
from libs.events.codec import seal
from libs.events.factory import next_event
from libs.settings import load_settings
from libs.workspace.repository import build_repository
from libs.workspace.scenario import load_scenario
from libs.workspace.scenario_data import generate_scenario_data
from libs.workspace.snapshot import snapshot_commit
from modelguard.audit_rerun import payload_digest
from modelguard.stack import SCENARIOS
from services.diagnoser.wiring import definition
from tests.support.sample_events import AT, Keys, gate, reported

CHURN = SCENARIOS / "churn-monthly-spend"


def _with_crashing_feature(tar_bytes: bytes) -> bytes:
    """The candidate tree with a feature module that raises on import, as a broken refactor would."""
    out = io.BytesIO()
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as source, tarfile.open(fileobj=out, mode="w") as target:
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else None  # type: ignore[union-attr]
            if member.name.endswith("churn_model/features.py") and data is not None:
                future = b"from __future__ import annotations\n"
                data = data.replace(future, future + b"raise RuntimeError('feature registry is not initialised')\n", 1)
                member.size = len(data)
            target.addfile(member, io.BytesIO(data) if data is not None else None)
    return out.getvalue()


def test_a_feature_command_that_crashes_yields_an_abstention(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    settings = load_settings()
    artifacts = LocalArtifactStore(settings.artifacts_dir)
    scenario = load_scenario(CHURN)
    repo = build_repository(CHURN, tmp_path / "repo")
    data = generate_scenario_data(scenario, tmp_path / "data")
    policy = artifacts.put(scenario.policy_path.read_bytes(), "application/yaml")
    keys = Keys("reporter", "context", "diagnoser")
    cause = reported(keys)
    base, candidate = repo.commits["base"], repo.commits["candidate"]
    workspace = WorkspaceRefs(
        model_urn=scenario.model_urn,
        repository=scenario.repository,
        base_commit=base,
        candidate_commit=candidate,
        base_snapshot=artifacts.put(snapshot_commit(repo.path, base), "application/x-tar"),
        candidate_snapshot=artifacts.put(
            _with_crashing_feature(snapshot_commit(repo.path, candidate)), "application/x-tar"
        ),
        data=artifacts.put(data.read_bytes(), "text/csv"),
    )
    context = ContextSnapshot(model_urn=scenario.model_urn, provider="file", fetched_at=AT.isoformat())
    collected = ContextCollected(
        run_id="run-1",
        workspace=workspace,
        policy=PolicyRef(name="churn", artifact=policy),
        gate=gate(),
        context=context,
        context_digest=context.digest().removeprefix("sha256:"),
    )
    signed = seal(
        next_event(collected, producer="context", producer_version="t", occurred_at=AT, causes=[cause]), keys["context"]
    )
    handler = definition(settings, keys["diagnoser"]).handler
    assert handler is not None

    [first] = handler(signed)
    [again] = handler(signed)
    assert type(first).__name__ == "DiagnosisAbstained"
    assert "features command failed" in first.reason
    [evidence] = first.report.evidence
    assert evidence.kind == "workspace_command_failed"
    assert "feature registry is not initialised" in evidence.values["output_tail"]
    assert str(settings.home) not in evidence.values["output_tail"]
    assert payload_digest(first) == payload_digest(again)
