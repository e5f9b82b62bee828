"""Evaluations measured once: a revision's result on a data window under the same command, kept by digest, so no
service of ModelGuard runs the same command on the same tree, window and arguments twice (the detector's referee
and the diagnoser's counterfactual cells measure the same two pairs; a CI retry or a replayed incident measures
them all again).

The entries are records beside the artifacts (`libs/artifacts/records.py`): where the artifacts are shared (the
Helm chart's ReadWriteMany claim, a bucket), every pod of the deployment reads every other's measurements, so the
diagnoser reads the referee's runs in Kubernetes too, not only when the services share one home.

Safe against the workspace it caches for, and against whoever else can write the artifacts:

- the key is computed by ModelGuard over bytes it holds: every file of the tree as ModelGuard extracted it from a
  digest-checked snapshot, the window's two files, the command's argv template and what else decides the result
  (label, metrics asked for, the gate, timeout, ModelGuard's version and Python). A workspace cannot choose a key:
  it would need a SHA-256 collision;
- a value is what ModelGuard's sandbox measured, written by the ModelGuard process that ran it, only after a
  successful run (a failure or a timeout is never kept: it may not happen again); nothing the workspace wrote is
  stored but the predictions or metrics the result already holds;
- every entry is a DSSE envelope signed by the service that measured it, with its own signing key under the
  cache's own payload type (so an entry never passes for an event): an entry is read only when a key the registry
  holds for one of `MEASURERS` signed exactly its bytes. Whoever else can write the artifacts (a bucket credential,
  the claim) can delete entries, never forge one;
- the artifacts are hidden from every sandboxed command (``protected_paths``);
- an entry that does not read back exactly (unparsable, unsigned, signed by another key, another key's result,
  wrong types) is a miss, and so is a store that does not answer: the command runs again and its result replaces
  the entry.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from opentelemetry import trace
from pydantic import ValidationError

from contracts.envelope import DsseEnvelope
from libs.artifacts.records import RecordStore, RecordsUnavailable, record_store
from libs.canonical_json import canonical_bytes
from libs.events.codec import envelope_bytes
from libs.policy.model_policy import GatePolicy, WorkspacePolicy
from libs.referee.held_out import HeldLabels
from libs.settings import Settings
from libs.signing.dsse import SignatureError, decode_payload, sign_envelope, verify_envelope
from libs.signing.keys import KeyRegistry, KeyRegistryError, SigningKey
from libs.version import MODELGUARD_VERSION
from libs.workspace.data_windows import DataWindow
from libs.workspace.model_evaluation import ModelEvaluation, evaluate_model
from libs.workspace.runner import CommandResult
from libs.workspace.scored_rows import ScoredRows
from libs.workspace.snapshot import file_digest, tree_digests

FORMAT = "modelguard-evaluation/2"
PAYLOAD_TYPE = "application/vnd.modelguard.evaluation+json"
"""The entries' DSSE payload type: a signature over an entry is never one over an event, and the other way round."""
RECORD_SPACE = "evaluations"
MEASURERS = frozenset({"detector", "diagnoser"})
"""The services that measure evaluations: an entry signed by any other service's key is a miss."""
SPAN = "workspace evaluation"
"""One span per evaluation asked for, with its key and whether it was read from the cache (`make bench` counts
them: no key may run twice)."""


log = logging.getLogger("modelguard.workspace")


def shared_evaluation_cache(settings: Settings, key: SigningKey) -> EvaluationCache:
    """The cache every service of the deployment shares, beside its artifacts; ``key``: the service's own signing
    key, which signs what it measures."""
    return EvaluationCache(record_store(settings, RECORD_SPACE), key, _registry(settings.key_registry_path))


def _registry(path: Path) -> KeyRegistry:
    """The key registry at ``path``. One that cannot be read yet (absent: a service built before its keys were
    provisioned) is read when a lookup misses and the file has changed: until then no entry verifies, and every
    evaluation is measured."""
    try:
        return KeyRegistry.load(path)
    except KeyRegistryError:
        return KeyRegistry([], path)


def content_digest(tree: Path, window: DataWindow) -> str:
    """sha256 over every file of the tree and the window's two files: what an evaluation's result depends on."""
    return content_digests([(tree, window)])[0]


def content_digests(pairs: Sequence[tuple[Path, DataWindow]]) -> list[str]:
    """``content_digest`` of each (tree, window), each distinct tree and data file read once: the diagnoser's four
    counterfactual cells are two trees on two windows (on the churn workspace 1.8 ms for the four read one by one,
    0.9 ms so)."""
    trees = {tree: tree_digests(tree) for tree in dict.fromkeys(tree for tree, _ in pairs)}
    files = {path: file_digest(path) for path in dict.fromkeys(p for _, w in pairs for p in (w.train, w.eval))}
    digests = []
    for tree, window in pairs:
        digest = hashlib.sha256()
        for path, sha in trees[tree].items():
            digest.update(f"tree {path} {sha}\n".encode())
        digest.update(f"train {files[window.train]}\neval {files[window.eval]}\n".encode())
        digests.append(digest.hexdigest())
    return digests


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
    """Measured results, one signed record per key."""

    def __init__(
        self, records: RecordStore, signer: SigningKey, registry: KeyRegistry, measurers: Collection[str] = MEASURERS
    ) -> None:
        self.records = records
        self.signer = signer
        self.registry = registry
        self.measurers = frozenset(measurers)

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
        """The result kept under ``key``, or None: none kept, or one that does not read back exactly."""
        try:
            data = self.records.read(key)
        except RecordsUnavailable as error:
            log.warning("evaluation cache: %s; measuring again", error)
            return None
        if data is None:
            return None
        try:
            envelope = DsseEnvelope.model_validate_json(data)
            if envelope.payloadType != PAYLOAD_TYPE:
                return None
            payload = decode_payload(envelope)
            if verify_envelope(envelope, self.registry, payload=payload) not in self.measurers:
                return None
            return _evaluation(json.loads(payload), key)
        except (ValidationError, SignatureError, ValueError, TypeError, KeyError):
            return None

    def put(self, key: str, evaluation: ModelEvaluation) -> None:
        """Keep ``evaluation`` under ``key``, signed by this service; a store that does not answer keeps nothing."""
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
        try:
            body = canonical_bytes(document)
        except ValueError:  # a metric or prediction that is no JSON number (NaN): measured again next time
            return
        envelope = sign_envelope(body, PAYLOAD_TYPE, self.signer)
        try:
            self.records.write(key, envelope_bytes(envelope))
        except RecordsUnavailable as error:
            log.warning("evaluation cache: %s; the result is not kept", error)


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
