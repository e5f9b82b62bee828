"""A candidate whose feature code cannot even run is a finding for a person, not a dead letter: the
diagnoser's wiring abstains, the evidence says which command failed and how, and the same failure always
hashes the same (scratch paths are taken out), so `modelguard rerun` can compare it by digest."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
import yaml

from contracts.events.context import ContextCollected
from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import Bundle, load_bundle
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.settings import Settings, load_settings
from libs.workspace.commands import evaluate
from libs.workspace.data_windows import DataWindow
from modelguard.audit_rerun import payload_digest
from services.detector.gate import apply_gate
from services.diagnoser.bootstrap import bootstrap
from tests.support.collected_incident import context_collected
from tests.support.sample_events import AT, Keys, reported
from tests.support.tiny_bundle import make_tiny_bundle

CRASH = "feature registry is not initialised"
# the feature job of the tiny model: reads raw rows, writes one feature column
BUILD = """import argparse
import csv

from tiny.features import feature

parser = argparse.ArgumentParser()
parser.add_argument("--data")
parser.add_argument("--output")
args = parser.parse_args()
with open(args.data, newline="") as handle:
    rows = list(csv.DictReader(handle))
with open(args.output, "w", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["feature"])
    writer.writerows([repr(feature(row))] for row in rows)
"""


def crashing_bundle(root: Path) -> Bundle:
    """The tiny bundle with a features command, whose candidate feature module raises on import, as a broken
    refactor would."""
    make_tiny_bundle(root)
    for revision in ("base", "candidate"):
        (root / "workspace" / revision / "tiny" / "build.py").write_text(BUILD, encoding="utf-8")
    features = root / "workspace" / "candidate" / "tiny" / "features.py"
    features.write_text(f"raise RuntimeError({CRASH!r})\n" + features.read_text(encoding="utf-8"), encoding="utf-8")
    spec = yaml.safe_load((root / "bundle.yaml").read_text(encoding="utf-8"))
    spec["workspace"]["features"] = ["python", "-m", "tiny.build", "--data", "{data}", "--output", "{output}"]
    (root / "bundle.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    return load_bundle(root)


def failed_incident(bundle: Bundle, artifacts: LocalArtifactStore, repo_dir: Path) -> ContextCollected:
    spec = bundle.spec.workspace.command_spec()
    approval = DataWindow(
        "approval", bundle.window_file("approval", "train.csv"), bundle.window_file("approval", "eval.csv")
    )
    baseline = evaluate(bundle.tree("base"), approval, spec).metrics
    # the candidate's CI evaluation could not run either; it reported the worst accuracy there is
    gate = apply_gate(bundle.spec.gate, baseline, {bundle.spec.gate.metric: 0.0})
    return context_collected(bundle, artifacts, repo_dir, gate)


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    return load_settings()


def test_a_feature_command_that_crashes_yields_an_abstention(tmp_path: Path, settings: Settings) -> None:
    artifacts = LocalArtifactStore(settings.artifacts_dir)
    bundle = crashing_bundle(tmp_path / "bundle")
    collected = failed_incident(bundle, artifacts, tmp_path / "repo")
    keys = Keys("reporter", "context", "diagnoser")
    event = next_event(collected, producer="context", producer_version="t", occurred_at=AT, causes=[reported(keys)])
    signed: SignedEvent = seal(event, keys["context"])
    handler = bootstrap(settings, keys["diagnoser"]).handler
    assert handler is not None

    [first] = handler(signed)
    [again] = handler(signed)

    assert type(first).__name__ == "DiagnosisAbstained"
    report = first.report
    recomputation = next(e for e in report.evidence if e.kind == "data.feature_recomputation")
    reason = recomputation.values["reason"]
    assert recomputation.values["available"] is False
    assert reason.startswith("candidate revision on the incident data: the features command failed: non-zero exit")
    assert f"RuntimeError: {CRASH}" in reason
    assert "<revision>/tiny/features.py" in reason  # the traceback's paths, scratch folder taken out
    assert f"RuntimeError: {CRASH}" in report.markdown and "## Not computed" in report.markdown
    published = json.dumps(first.model_dump(mode="json"))
    assert str(settings.home) not in published and tempfile.gettempdir() + "/" not in published
    assert payload_digest(first) == payload_digest(again)
