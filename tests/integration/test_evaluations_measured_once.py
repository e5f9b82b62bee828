"""An incident's evaluations are measured once across its services: the detector's referee runs the base revision on
the approval window and the candidate on the incident window; the diagnoser's four counterfactual cells then run
only the two other pairs, each service with its own signing key and scratch copy, sharing only the artifacts (as
their pods do in Kubernetes), and the figures agree with the
referee's, and the diagnosis reports them as it would had it run them. A replay of the incident (a CI retry) runs
nothing at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import libs.workspace.evaluation_cache as cache_module
from contracts.common import PolicyRef
from contracts.events.evaluation import RegressionDetected
from libs.artifacts.records import FolderRecords
from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.policy.diagnosis import central_diagnosis_policy
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.policy.model_policy import parse_policy
from libs.workspace.evaluation_cache import EvaluationCache
from libs.workspace.materialize import materialized_workspace
from modelguard.reporter import evaluate_bundle
from modelguard.synthetic_incidents import SampleKeys
from services.detector.handler import detect
from services.detector.policy_catalog import LoadedPolicy
from services.detector.referee import artifact_referee
from services.diagnoser.trials.counterfactual_cells import run_counterfactual_cells
from services.diagnoser.trials.parallelism import trial_runner
from tests.support.tiny_bundle import make_tiny_bundle


def test_the_diagnoser_does_not_repeat_the_referee_s_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[tuple[str, str]] = []
    real = cache_module.evaluate_model  # type: ignore[attr-defined]

    def counted(tree: Path, window: Any, *args: Any) -> Any:
        ran.append((tree.name, window.name))
        return real(tree, window, *args)

    monkeypatch.setattr(cache_module, "evaluate_model", counted)
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    keys = SampleKeys.generate(("detector", "diagnoser"))
    records = FolderRecords(tmp_path / "home" / "artifacts" / "evaluations")
    referee_cache = EvaluationCache(records, keys.keys["detector"], keys.registry)
    diagnoser_cache = EvaluationCache(records, keys.keys["diagnoser"], keys.registry)
    root = make_tiny_bundle(tmp_path / "bundle", candidate="candidate", contract="predict")
    train = root / "data" / "incident" / "train.csv"  # the tiny bundle's windows hold the same rows: not here
    train.write_text("".join(train.read_text().splitlines(keepends=True)[:-5]))
    bundle = load_bundle(root)
    artifacts = LocalArtifactStore(tmp_path / "home" / "artifacts")
    evaluation = evaluate_bundle(bundle.root, tmp_path / "ci", artifacts, "run-1", None)
    raw = effective_policy_bytes(bundle, read_central_policy())
    policy = LoadedPolicy(parse_policy(raw, "tiny"), raw, "tiny.yaml")

    def store(loaded: LoadedPolicy) -> PolicyRef:
        return PolicyRef(name="tiny", artifact=artifacts.put(loaded.raw, "application/yaml"))

    def diagnose_cells() -> Any:
        with materialized_workspace(artifacts, evaluation.workspace, tmp_path / "diagnoser") as workspace:
            runner = trial_runner(
                policy.policy.workspace, policy.policy.gate, central_diagnosis_policy(), cache=diagnoser_cache
            )
            cells = run_counterfactual_cells(
                runner, workspace.base, workspace.candidate, workspace.approval, workspace.incident
            )
            return cells, runner

    detected = detect(evaluation, policy, store, artifact_referee(artifacts, tmp_path / "detector", referee_cache))
    assert isinstance(detected, RegressionDetected)
    assert sorted(ran) == [("base", "approval"), ("candidate", "incident")]

    cells, runner = diagnose_cells()

    assert sorted(ran[2:]) == [("base", "incident"), ("candidate", "approval")]
    assert (cells.base_on_approval, cells.candidate_on_incident) == (detected.gate.baseline, detected.gate.candidate)
    # the diagnosis reports the four as its own evaluations either way: its payload must not depend on what ran before
    assert runner.evaluations == 4 and not any(o.cached for o in runner.records)

    replayed, _ = diagnose_cells()  # the same incident again: every pair is known
    four = ("base_on_approval", "base_on_incident", "candidate_on_approval", "candidate_on_incident")
    assert len(ran) == 4 and [getattr(replayed, c) for c in four] == [getattr(cells, c) for c in four]
