"""Evaluations measured once: a revision's result on a data window under the same command, kept by digest, so no
service of ModelGuard runs the same command on the same tree, window and arguments twice (the detector's referee
and the diagnoser's counterfactual cells measure the same two pairs; a CI retry or a replayed incident measures
them all again).

Safe against the workspace it caches for:

- the key is computed by ModelGuard over bytes it holds: every file of the tree as ModelGuard extracted it from a
  digest-checked snapshot, the window's two files, the command's argv template and what else decides the result
  (label, metrics asked for, the gate, timeout, ModelGuard's version and Python). A workspace cannot choose a key:
  it would need a SHA-256 collision;
- a value is what ModelGuard's sandbox measured, written by the ModelGuard process that ran it, only after a
  successful run (a failure or a timeout is never kept: it may not happen again); nothing the workspace wrote is
  stored but the predictions or metrics the result already holds;
- the cache's folder is under ``MODELGUARD_HOME``, which the sandbox never shows a command (``protected_paths``);
- an entry that does not read back exactly (unparsable, another key, wrong types) is a miss: the command runs
  again and its result replaces the entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from opentelemetry import trace

from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.referee.held_out import HeldLabels
from libs.settings import Settings
from libs.version import MODELGUARD_VERSION
from libs.workspace.data_windows import DataWindow
from libs.workspace.model_evaluation import ModelEvaluation, evaluate_model
from libs.workspace.runner import CommandResult
from libs.workspace.scored_rows import ScoredRows
from libs.workspace.snapshot import file_digest, tree_digests

FORMAT = "modelguard-evaluation/1"
SPAN = "workspace evaluation"
"""One span per evaluation asked for, with its key and whether it was read from the cache (`make bench` counts
them: no key may run twice)."""


def shared_evaluation_cache(settings: Settings) -> EvaluationCache:
    """The cache every service of one ModelGuard home shares, in that home (hidden from the sandbox)."""
    return EvaluationCache(settings.home / "evaluation-cache")


def content_digest(tree: Path, window: DataWindow) -> str:
    """sha256 over every file of the tree and the window's two files: what an evaluation's result depends on."""
    digest = hashlib.sha256()
    for path, sha in tree_digests(tree).items():
        digest.update(f"tree {path} {sha}\n".encode())
    digest.update(f"train {file_digest(window.train)}\neval {file_digest(window.eval)}\n".encode())
    return digest.hexdigest()


def evaluation_key(content: str, workspace: WorkspacePolicy, gate: GatePolicy) -> str:
    """The cache key: the tree and window's content digest, and everything of the command that decides its result."""
    command = {
        "predict": list(workspace.predict) if workspace.predict is not None else None,
        "evaluate": list(workspace.evaluate) if workspace.predict is None and workspace.evaluate else None,
        "label": workspace.label,
        "reported_metrics": sorted(workspace.reported_metrics),
        "gate": gate.model_dump(mode="json"),
        "timeout_s": workspace.timeout_s,
        "modelguard": MODELGUARD_VERSION,
        "python": sys.version,
    }
    text = json.dumps({"format": FORMAT, "content": content, "command": command}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Lookup:
    evaluation: ModelEvaluation
    key: str
    cached: bool
    """True when the result was read from the cache instead of being measured now."""


class EvaluationCache:
    """A folder of measured results, one small JSON file per key (``ab/abcdef….json``), written atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def evaluate(
        self,
        tree: Path,
        window: DataWindow,
        workspace: WorkspacePolicy,
        gate: GatePolicy,
        *,
        content: str | None = None,
        evaluate: Callable[[Path, DataWindow, WorkspacePolicy, GatePolicy], ModelEvaluation] | None = None,
    ) -> Lookup:
        """The evaluation of ``tree`` on ``window``: from the cache, or measured now by ``evaluate`` (and kept when
        it succeeded; ``evaluate_model`` when None). ``content``: the tree and window's `content_digest` when the caller
        has it. Raises what ``evaluate`` raises."""
        key = evaluation_key(content or content_digest(tree, window), workspace, gate)
        with trace.get_tracer("modelguard.workspace").start_as_current_span(SPAN) as span:
            span.set_attribute("modelguard.evaluation.key", key)
            kept = self.get(key)
            span.set_attribute("modelguard.evaluation.cached", kept is not None)
            if kept is not None:
                return Lookup(kept, key, True)
            evaluation = (evaluate or evaluate_model)(tree, window, workspace, gate)
            self.put(key, evaluation)
            return Lookup(evaluation, key, False)

    def get(self, key: str) -> ModelEvaluation | None:
        try:
            document = json.loads(self._path(key).read_text())
            return _evaluation(document, key)
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, key: str, evaluation: ModelEvaluation) -> None:
        document: dict[str, Any] = {
            "format": FORMAT,
            "key": key,
            "source": evaluation.source,
            "metrics": evaluation.metrics,
            "argv": list(evaluation.command.argv),
            "seconds": evaluation.command.duration_s,
        }
        if evaluation.scored is not None:
            document["labels"] = list(evaluation.scored.labels.texts)
            document["predictions"] = [float(p) for p in evaluation.scored.predictions]
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".incoming-")
        with os.fdopen(fd, "w") as out:
            out.write(json.dumps(document))  # json.dump to a file takes the pure-Python encoder: 1.9x slower here
        os.replace(tmp, path)

    def _path(self, key: str) -> Path:
        if len(key) != 64 or any(c not in "0123456789abcdef" for c in key):
            raise ValueError(f"not an evaluation key: {key!r}")
        return self.root / key[:2] / f"{key}.json"


def _evaluation(document: Any, key: str) -> ModelEvaluation | None:
    if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("key") != key:
        return None
    source, argv, seconds = document["source"], document["argv"], float(document["seconds"])
    if source not in ("referee", "self_reported") or not all(isinstance(a, str) for a in argv):
        return None
    command = CommandResult(argv=list(argv), returncode=0, stdout="", stderr="", duration_s=seconds)
    if source == "self_reported":
        return ModelEvaluation({str(k): float(v) for k, v in dict(document["metrics"]).items()}, source, command)
    labels, predictions = document["labels"], document["predictions"]
    if not all(isinstance(t, str) for t in labels) or len(labels) != len(predictions):
        return None
    scored = ScoredRows(HeldLabels(tuple(labels)), np.array([float(p) for p in predictions], dtype=float))
    metrics = {str(k): float(v) for k, v in dict(document["metrics"]).items()}
    return ModelEvaluation(metrics, "referee", command, scored)
