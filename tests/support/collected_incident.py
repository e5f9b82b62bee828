"""A bundle's incident as the context service hands it on: its two revisions' snapshots, its data windows and its
effective policy put into an artifact store, with the gate and the context snapshot the caller decided."""

from __future__ import annotations

from pathlib import Path

from contracts.common import GateResult, PolicyRef, WorkspaceRefs
from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import ContextCollected
from libs.artifacts.store import ArtifactStore
from libs.bundle.load import Bundle
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.workspace.data_windows import FILE_NAMES, MEDIA_TYPE, WINDOW_NAMES, pack_data_windows
from libs.workspace.repository import build_repository
from libs.workspace.snapshot import snapshot_commit
from tests.support.sample_events import AT


def context_collected(bundle: Bundle, artifacts: ArtifactStore, repo_dir: Path, gate: GateResult) -> ContextCollected:
    """The bundle's revisions are committed in a repository at ``repo_dir``; the context is the file provider's
    snapshot of the model taken at the sample events' moment."""
    repo = build_repository(bundle, repo_dir)
    base, candidate = repo.commits["base"], repo.commits["candidate"]
    windows = {w: {n: bundle.window_file(w, n) for n in FILE_NAMES} for w in WINDOW_NAMES}
    policy = effective_policy_bytes(bundle, read_central_policy())
    context = ContextSnapshot(model_urn=bundle.spec.model.urn, provider="file", fetched_at=AT.isoformat())
    return ContextCollected(
        run_id="run-1",
        workspace=WorkspaceRefs(
            model_urn=bundle.spec.model.urn,
            repository=bundle.spec.model.repository,
            base_commit=base,
            candidate_commit=candidate,
            base_snapshot=artifacts.put(snapshot_commit(repo.path, base), "application/x-tar"),
            candidate_snapshot=artifacts.put(snapshot_commit(repo.path, candidate), "application/x-tar"),
            data=artifacts.put(pack_data_windows(windows), MEDIA_TYPE),
        ),
        policy=PolicyRef(name=bundle.name, artifact=artifacts.put(policy, "application/yaml")),
        gate=gate,
        context=context,
        context_digest=context.digest().removeprefix("sha256:"),
    )
