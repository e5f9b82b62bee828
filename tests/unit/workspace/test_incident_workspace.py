"""A phase's inputs from the artifact store: a missing or corrupted one rejects the event with a reason."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from contracts.common import IncidentState, PolicyRef
from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.bus.handler_errors import RejectedInput
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.workspace.git import run_git
from libs.workspace.incident_workspace import incident_trees, incident_workspace
from libs.workspace.snapshot import snapshot_commit
from tests.support.sample_events import gate, workspace
from tests.support.waiting import wait_until
from tests.unit.workspace.test_workspace_snapshot import GIT_IDENTITY


def _state(store: LocalArtifactStore, policy: bytes) -> IncidentState:
    return IncidentState(
        run_id="r", workspace=workspace(), policy=PolicyRef(name="p", artifact=store.put(policy, "x")), gate=gate()
    )


def test_a_missing_snapshot_rejects_the_input(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "artifacts")
    bundle = load_bundle(Path(__file__).resolve().parents[3] / "fixtures/scenarios/churn-monthly-spend")
    policy = effective_policy_bytes(bundle, read_central_policy())
    with pytest.raises(RejectedInput) as caught, incident_workspace(store, _state(store, policy), tmp_path):
        pass
    assert caught.value.reason == "inputs-unavailable" and "not in" in caught.value.detail


def test_an_unreadable_policy_rejects_the_input(tmp_path: Path) -> None:
    store = LocalArtifactStore(tmp_path / "artifacts")
    with (
        pytest.raises(RejectedInput, match="inputs-unavailable"),
        incident_workspace(store, _state(store, b"gate: [not, a, mapping"), tmp_path),
    ):
        pass


def test_a_data_windows_artifact_lacking_a_file_rejects_the_input(tmp_path: Path) -> None:
    """A tar that is sound but holds only some of the window files (an upload from outside) is an unavailable input,
    not an error out of the handler."""
    store = LocalArtifactStore(tmp_path / "artifacts")
    bundle = load_bundle(Path(__file__).resolve().parents[3] / "fixtures/scenarios/churn-monthly-spend")
    policy = effective_policy_bytes(bundle, read_central_policy())
    tree = _tar({"model.py": b"x = 1\n"})
    partial = _tar({"approval/train.csv": b"a\n1\n", "approval/eval.csv": b"a\n1\n", "incident/train.csv": b"a\n1\n"})
    refs = workspace().model_copy(
        update={
            "base_snapshot": store.put(tree, "application/x-tar"),
            "candidate_snapshot": store.put(tree, "application/x-tar"),
            "data": store.put(partial, "application/x-tar"),
        }
    )
    state = _state(store, policy).model_copy(update={"workspace": refs})
    with pytest.raises(RejectedInput) as caught, incident_workspace(store, state, tmp_path / "scratch"):
        pass
    assert caught.value.reason == "inputs-unavailable"
    assert "incident/eval.csv" in caught.value.detail


def test_the_trees_alone_leave_the_data_packed_and_are_removed_after(tmp_path: Path) -> None:
    """A phase that reads no data gets both trees; the windows' artifact is not even read, so a broken one does not
    reject its input. A missing tree still does, with the same reason."""
    store = LocalArtifactStore(tmp_path / "artifacts")
    bundle = load_bundle(Path(__file__).resolve().parents[3] / "fixtures/scenarios/churn-monthly-spend")
    policy = effective_policy_bytes(bundle, read_central_policy())
    refs = workspace().model_copy(
        update={
            "base_snapshot": store.put(_tar({"model.py": b"x = 1\n"}), "application/x-tar"),
            "candidate_snapshot": store.put(_tar({"model.py": b"x = 2\n"}), "application/x-tar"),
            "data": store.put(b"not a tar", "application/x-tar"),
        }
    )
    state = _state(store, policy).model_copy(update={"workspace": refs})
    with incident_trees(store, state, tmp_path / "scratch") as (read, trees):
        assert read.gate.metric == bundle.spec.gate.metric
        assert (trees.base / "model.py").read_bytes() == b"x = 1\n"
        assert (trees.candidate / "model.py").read_bytes() == b"x = 2\n"
        assert sorted(p.name for p in trees.base.parent.iterdir()) == ["base", "candidate"]
    assert wait_until(lambda: not trees.base.parent.exists(), 30)  # removed on the removal thread
    with pytest.raises(RejectedInput) as caught, incident_workspace(store, state, tmp_path / "scratch"):
        pass
    assert caught.value.reason == "inputs-unavailable"  # the data the whole workspace needs
    missing = state.model_copy(update={"workspace": workspace()})
    with pytest.raises(RejectedInput) as caught, incident_trees(store, missing, tmp_path / "scratch"):
        pass
    assert caught.value.reason == "inputs-unavailable" and "not in" in caught.value.detail


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for name, data in files.items():
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


def test_a_pull_request_whose_links_lead_out_through_each_other_rejects_the_input(tmp_path: Path) -> None:
    """The snapshot is what CI uploads: ``git archive`` of the pull request's commit, which holds two links whose
    texts each stay inside the tree and which together lead to the scratch folder above it (and from there to any
    file of the service's machine). The phase refuses the input before any reader follows them."""
    repo = tmp_path / "repo"
    (repo / "pkg" / "deep").mkdir(parents=True)
    (repo / "pkg" / "model.py").write_text("x = 1\n")
    (repo / "pkg" / "deep" / "up").symlink_to("../..")
    (repo / "pkg" / "features.py").symlink_to("deep/up/../secret.key")
    run_git(["init", "--quiet", "--initial-branch=main"], repo)
    run_git(["add", "--all"], repo)
    run_git(["commit", "--quiet", "-m", "links"], repo, extra_env=GIT_IDENTITY)
    store = LocalArtifactStore(tmp_path / "artifacts")
    bundle = load_bundle(Path(__file__).resolve().parents[3] / "fixtures/scenarios/churn-monthly-spend")
    policy = effective_policy_bytes(bundle, read_central_policy())
    hostile = store.put(snapshot_commit(repo, "HEAD"), "application/x-tar")
    base = store.put(_tar({"pkg/model.py": b"x = 1\n"}), "application/x-tar")
    refs = workspace().model_copy(update={"base_snapshot": base, "candidate_snapshot": hostile})
    state = _state(store, policy).model_copy(update={"workspace": refs})
    scratch = tmp_path / "scratch"
    (scratch / "secret.key").parent.mkdir(parents=True)
    with pytest.raises(RejectedInput) as caught, incident_workspace(store, state, scratch):
        pass
    assert caught.value.reason == "inputs-unavailable"
    assert "pkg/features.py" in caught.value.detail and "link points out of the snapshot" in caught.value.detail
