"""With ``predict`` declared, the gate reads the referee's figures; the CI's claim is kept, never believed.
The referee here is the real one: trees and data from a real artifact store, predictions in the sandbox."""

from __future__ import annotations

import io
import tarfile
import threading
from pathlib import Path

import pytest

from contracts.common import PolicyRef
from contracts.events.evaluation import ClaimedMetrics, EnvironmentFailed, EvaluationPassed, RegressionDetected
from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.policy.model_policy import parse_policy
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.model_evaluation import evaluate_model
from modelguard.reporter import evaluate_bundle
from services.detector.handler import RefereeFailed, detect
from services.detector.policy_catalog import LoadedPolicy
from services.detector.referee import artifact_referee
from tests.support.tiny_bundle import make_tiny_bundle


def _reported(tmp_path: Path, candidate: str, claim: dict[str, float] | None = None, bundle: Path | None = None):
    bundle = load_bundle(bundle or make_tiny_bundle(tmp_path / "bundle", candidate=candidate, contract="predict"))
    artifacts = LocalArtifactStore(tmp_path / "artifacts")
    evaluation = evaluate_bundle(bundle.root, tmp_path / "ci", artifacts, "run-1", None)
    if claim is not None:
        evaluation = evaluation.model_copy(update={"claimed": ClaimedMetrics(baseline=claim, candidate=claim)})
    raw = effective_policy_bytes(bundle, read_central_policy())
    policy = LoadedPolicy(parse_policy(raw, "tiny"), raw, "tiny.yaml")
    referee = artifact_referee(artifacts, tmp_path / "scratch")
    store = lambda loaded: PolicyRef(name="tiny", artifact=artifacts.put(loaded.raw, "application/yaml"))  # noqa: E731
    return evaluation, policy, store, referee


def test_a_workspace_with_predict_claims_nothing_and_the_referee_finds_the_regression(tmp_path: Path) -> None:
    evaluation, policy, store, referee = _reported(tmp_path, "candidate")
    assert evaluation.claimed is None
    event = detect(evaluation, policy, store, referee)
    assert isinstance(event, RegressionDetected)
    assert event.gate.metric_source == "referee"
    assert event.gate.baseline > 0.8 > 0.2 > event.gate.candidate


def test_a_claimed_pass_does_not_pass_a_regression(tmp_path: Path) -> None:
    evaluation, policy, store, referee = _reported(tmp_path, "candidate", claim={"accuracy": 0.99})
    event = detect(evaluation, policy, store, referee)
    assert isinstance(event, RegressionDetected)
    assert (event.gate.claimed_baseline, event.gate.claimed_candidate) == (0.99, 0.99)


def test_a_harmless_change_passes_on_the_referee_s_figures(tmp_path: Path) -> None:
    evaluation, policy, store, referee = _reported(tmp_path, "harmless")
    assert isinstance(detect(evaluation, policy, store, referee), EvaluationPassed)


def test_without_a_referee_a_predict_workspace_is_refused(tmp_path: Path) -> None:
    evaluation, policy, store, _ = _reported(tmp_path, "candidate")
    with pytest.raises(RefereeFailed, match="no referee"):
        detect(evaluation, policy, store, None)


def test_a_revision_whose_predict_fails_is_a_referee_failure_with_its_reason(tmp_path: Path) -> None:
    evaluation, policy, store, referee = _reported(tmp_path, "candidate")
    broken = evaluation.model_copy(
        update={"workspace": evaluation.workspace.model_copy(update={"candidate_snapshot": evaluation.workspace.data})}
    )
    with pytest.raises(RefereeFailed, match="candidate revision could not be refereed"):
        detect(broken, policy, store, referee)


def test_a_data_windows_upload_lacking_a_file_is_a_referee_failure_with_its_reason(tmp_path: Path) -> None:
    """The windows artifact comes from outside (the CI's upload): one that lacks a file is refused with the file it
    lacks, not an error out of the detector's handler."""
    evaluation, policy, store, referee = _reported(tmp_path, "candidate")
    artifacts = LocalArtifactStore(tmp_path / "artifacts")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        member = tarfile.TarInfo("approval/train.csv")
        member.size = 4
        archive.addfile(member, io.BytesIO(b"a\n1\n"))
    partial = artifacts.put(buffer.getvalue(), "application/x-tar")
    lacking = evaluation.model_copy(update={"workspace": evaluation.workspace.model_copy(update={"data": partial})})
    with pytest.raises(RefereeFailed, match=r"inputs are unavailable: .*lacks approval/eval.csv, incident/train.csv"):
        detect(lacking, policy, store, referee)


HOSTILE_PREDICT = """\
import argparse
parser = argparse.ArgumentParser()
for name in ("--train", "--features", "--output"):
    parser.add_argument(name)
args = parser.parse_args()
with open(args.output, "w") as out:  # a quote opened and never closed: one cell past the csv module's limit
    out.write('row_id,prediction\\n0,"0.9\\n' + "1,0.9\\n" * 30_000)
"""


def test_predictions_the_csv_reader_refuses_are_a_referee_failure_with_their_reason(tmp_path: Path) -> None:
    bundle = make_tiny_bundle(tmp_path / "bundle", candidate="candidate", contract="predict")
    (bundle / "workspace" / "candidate" / "predict.py").write_text(HOSTILE_PREDICT, encoding="utf-8")
    evaluation, policy, store, referee = _reported(tmp_path, "candidate", bundle=bundle)
    with pytest.raises(RefereeFailed, match=r"candidate revision could not be refereed.*not CSV: field larger"):
        detect(evaluation, policy, store, referee)


def test_a_revision_whose_environment_is_refused_ends_the_incident_as_an_outcome(tmp_path: Path) -> None:
    """Not a dead letter: the detector says which revision, which declaration and why."""
    bundle = make_tiny_bundle(tmp_path / "bundle", candidate="candidate", contract="predict")
    (bundle / "workspace" / "candidate" / "requirements.txt").write_text("numpy==2.4.6\n-e ./vendor/fastcsv\n")
    evaluation, policy, store, referee = _reported(tmp_path, "candidate", bundle=bundle)
    event = detect(evaluation, policy, store, referee)
    assert isinstance(event, EnvironmentFailed)
    assert (event.revision, event.declaration, event.digest) == ("candidate", "requirements.txt", "")
    assert "requirements.txt line 2 is not a package from the index" in event.reason
    assert event.run_id == evaluation.run_id and event.policy.name == "tiny"


def _meeting_evaluate(barrier: threading.Barrier, failing: set[str] = frozenset()):  # type: ignore[assignment]
    """An evaluation that waits for the other revision's to start: it returns only when both run at once."""

    def evaluate(tree: Path, window, workspace, gate):  # type: ignore[no-untyped-def]
        revision = tree.name
        try:
            barrier.wait()
        except threading.BrokenBarrierError as alone:
            raise WorkspaceCommandFailed("evaluate", "ran alone") from alone
        if revision in failing:
            raise WorkspaceCommandFailed("evaluate", f"{revision} crashed")
        return evaluate_model(tree, window, workspace, gate)

    return evaluate


def test_with_two_cpus_the_two_revisions_are_evaluated_at_once(tmp_path: Path) -> None:
    """Measured, not timed: each evaluation waits at a barrier for the other, so one at a time would break it."""
    evaluation, policy, store, _ = _reported(tmp_path, "candidate")
    artifacts = LocalArtifactStore(tmp_path / "artifacts")
    parallel = artifact_referee(
        artifacts, tmp_path / "scratch-2", parallel=2, evaluate=_meeting_evaluate(threading.Barrier(2, timeout=60))
    )
    event = detect(evaluation, policy, store, parallel)
    assert isinstance(event, RegressionDetected) and event.gate.metric_source == "referee"
    one_at_a_time = artifact_referee(
        artifacts, tmp_path / "scratch-1", parallel=1, evaluate=_meeting_evaluate(threading.Barrier(2, timeout=2))
    )
    with pytest.raises(RefereeFailed, match=r"baseline revision could not be refereed.*ran alone"):
        detect(evaluation, policy, store, one_at_a_time)  # the lone evaluation waited for a partner in vain


def test_a_policy_that_allows_one_evaluation_at_a_time_is_obeyed(tmp_path: Path) -> None:
    evaluation, loaded, store, _ = _reported(tmp_path, "candidate")
    assert loaded.policy.diagnosis is not None
    one = loaded.policy.diagnosis.model_copy(update={"max_parallel_evaluations": 1})
    serial = LoadedPolicy(loaded.policy.model_copy(update={"diagnosis": one}), loaded.raw, loaded.origin)
    referee = artifact_referee(
        LocalArtifactStore(tmp_path / "artifacts"),
        tmp_path / "s",
        parallel=2,
        evaluate=_meeting_evaluate(threading.Barrier(2, timeout=2)),
    )
    with pytest.raises(RefereeFailed, match=r"baseline revision could not be refereed.*ran alone"):
        detect(evaluation, serial, store, referee)


def test_when_both_revisions_fail_at_once_the_baseline_s_failure_is_reported(tmp_path: Path) -> None:
    evaluation, policy, store, _ = _reported(tmp_path, "candidate")
    both_fail = _meeting_evaluate(threading.Barrier(2, timeout=60), failing={"base", "candidate"})
    referee = artifact_referee(
        LocalArtifactStore(tmp_path / "artifacts"), tmp_path / "s", parallel=2, evaluate=both_fail
    )
    with pytest.raises(RefereeFailed, match=r"the baseline revision could not be refereed: .*base crashed"):
        detect(evaluation, policy, store, referee)
