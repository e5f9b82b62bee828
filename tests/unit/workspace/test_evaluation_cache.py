"""The evaluation cache on a real (tiny) workspace, run in the sandbox: the same tree, window and command run once;
any byte of the tree or the window, or any word of the command, changed runs again; an entry that does not read
back is a miss; a failed run is not kept; the workspace cannot reach the cache to poison it; another service's
cache over the same artifacts reads what this one measured, and only what a measuring service's registered key
signed."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest

import libs.signing.keys as keys_module
import libs.workspace.evaluation_cache as cache_module
import libs.workspace.snapshot as snapshot
from libs.artifacts.records import FolderRecords
from libs.bundle.load import load_bundle
from libs.canonical_json import canonical_bytes
from libs.settings import load_settings
from libs.signing.dsse import sign_envelope
from libs.signing.keys import generate_key
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.data_windows import DataWindow
from libs.workspace.evaluation_cache import EvaluationCache, shared_evaluation_cache
from libs.workspace.model_evaluation import ModelEvaluation
from libs.workspace.runner import CommandResult
from modelguard.synthetic_incidents import SampleKeys
from tests.support.tiny_bundle import make_tiny_bundle

POISONER = """import sys
target = sys.argv[0] and {cache!r}
for attempt in (target + "/poison.json", target):
    try:
        open(attempt + "/x" if attempt == target else attempt, "w").write("{{}}")
        print("wrote", attempt)
    except OSError as error:
        print("refused", type(error).__name__)
with open(sys.argv[sys.argv.index("--output") + 1], "w") as out:
    out.write("row_id,prediction\\n")
    for line in list(open(sys.argv[sys.argv.index("--features") + 1]))[1:]:
        out.write(line.split(",")[0] + ",1\\n")
"""


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The trees the sandbox really ran an evaluation on (the real evaluation runs: this only counts)."""
    ran: list[Path] = []
    real = cache_module.evaluate_model  # type: ignore[attr-defined]

    def counted(tree: Path, *args: Any) -> Any:
        ran.append(tree)
        return real(tree, *args)

    monkeypatch.setattr(cache_module, "evaluate_model", counted)
    return ran


def _bundle(tmp_path: Path) -> Any:
    return load_bundle(make_tiny_bundle(tmp_path / "bundle", contract="predict"))


def _window(bundle: Any, name: Literal["approval", "incident"]) -> DataWindow:
    return DataWindow(name=name, train=bundle.window_file(name, "train.csv"), eval=bundle.window_file(name, "eval.csv"))


KEYS = SampleKeys.generate(("detector", "diagnoser", "publisher"))


def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: str = "diagnoser") -> EvaluationCache:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))  # the sandbox hides it from every command
    return EvaluationCache(_records(tmp_path), KEYS.keys[service], KEYS.registry)


def _records(tmp_path: Path) -> FolderRecords:
    return FolderRecords(tmp_path / "home" / "artifacts" / "evaluations")


def test_the_same_tree_window_and_command_run_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    bundle, cache = _bundle(tmp_path), _cache(tmp_path, monkeypatch)
    spec, window = bundle.spec, _window(bundle, "incident")

    first = cache.evaluate(bundle.tree("base"), window, spec.workspace, spec.gate)
    again = cache.evaluate(bundle.tree("base"), window, spec.workspace, spec.gate)

    assert (first.cached, again.cached, len(runs)) == (False, True, 1)
    assert again.key == first.key and again.evaluation.metrics == first.evaluation.metrics
    assert again.evaluation.scored is not None and first.evaluation.scored is not None
    assert list(again.evaluation.scored.predictions) == list(first.evaluation.scored.predictions)
    assert again.evaluation.scored.labels == first.evaluation.scored.labels


def test_a_changed_tree_window_or_command_runs_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    bundle, cache = _bundle(tmp_path), _cache(tmp_path, monkeypatch)
    spec, tree = bundle.spec, bundle.tree("base")
    keys = {cache.evaluate(tree, _window(bundle, "incident"), spec.workspace, spec.gate).key}

    incident = _window(bundle, "incident")
    fewer = tmp_path / "fewer-eval.csv"
    fewer.write_text("".join(incident.eval.read_text().splitlines(keepends=True)[:-1]))  # one row less
    keys.add(cache.evaluate(tree, DataWindow("incident", incident.train, fewer), spec.workspace, spec.gate).key)
    (tree / "README.md").write_text("one byte more\n")
    keys.add(cache.evaluate(tree, _window(bundle, "incident"), spec.workspace, spec.gate).key)
    longer = spec.workspace.model_copy(update={"timeout_s": spec.workspace.timeout_s + 1})
    keys.add(cache.evaluate(tree, _window(bundle, "incident"), longer, spec.gate).key)
    assert spec.workspace.predict is not None
    other = spec.workspace.model_copy(update={"predict": (*spec.workspace.predict, "--verbose")})
    with pytest.raises(WorkspaceCommandFailed):  # its own predict.py refuses the flag: a failure is not kept
        cache.evaluate(tree, _window(bundle, "incident"), other, spec.gate)
    with pytest.raises(WorkspaceCommandFailed):
        cache.evaluate(tree, _window(bundle, "incident"), other, spec.gate)

    assert len(keys) == 4 and len(runs) == 6


def test_an_entry_that_does_not_read_back_is_a_miss_and_is_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    bundle, cache = _bundle(tmp_path), _cache(tmp_path, monkeypatch)
    spec, window = bundle.spec, _window(bundle, "incident")
    measured = cache.evaluate(bundle.tree("base"), window, spec.workspace, spec.gate)
    (entry,) = _records(tmp_path).root.glob("*/*.json")
    for forged in ("{not json", json.dumps({**json.loads(entry.read_text()), "payloadType": "text/plain"})):
        entry.write_text(forged)
        again = cache.evaluate(bundle.tree("base"), window, spec.workspace, spec.gate)
        assert not again.cached and again.evaluation.metrics == measured.evaluation.metrics
    assert len(runs) == 3 and cache.evaluate(bundle.tree("base"), window, spec.workspace, spec.gate).cached


def test_the_workspace_cannot_reach_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle, cache = _bundle(tmp_path), _cache(tmp_path, monkeypatch)
    spec, window, tree = bundle.spec, _window(bundle, "incident"), bundle.tree("candidate")
    root = _records(tmp_path).root
    root.mkdir(parents=True)
    (tree / "predict.py").write_text(POISONER.format(cache=str(root)), encoding="utf-8")

    measured = cache.evaluate(tree, window, spec.workspace, spec.gate)

    assert sorted(p.name for p in root.rglob("*")) == sorted([measured.key[:2], f"{measured.key}.json"])
    assert measured.evaluation.scored is not None
    assert set(measured.evaluation.scored.predictions) == {1.0}  # what it predicted is all that was kept


def test_another_service_reads_what_one_measured_over_the_same_artifacts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    """The detector's and the diagnoser's pods share only the artifacts: the diagnoser reads the referee's run."""
    bundle = _bundle(tmp_path)
    spec, window = bundle.spec, _window(bundle, "incident")
    measured = _cache(tmp_path, monkeypatch, "detector").evaluate(
        bundle.tree("base"), window, spec.workspace, spec.gate
    )
    read = _cache(tmp_path, monkeypatch, "diagnoser").evaluate(bundle.tree("base"), window, spec.workspace, spec.gate)
    assert (measured.cached, read.cached, len(runs)) == (False, True, 1)
    assert read.evaluation.metrics == measured.evaluation.metrics


def _forged_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path], forge: Any) -> None:
    """Measure once, let ``forge(entry document) -> new document`` rewrite the stored entry, then ask again: the
    forged entry must be a miss that is measured again, and the new measurement must replace it."""
    bundle, cache = _bundle(tmp_path), _cache(tmp_path, monkeypatch)
    spec, window, tree = bundle.spec, _window(bundle, "incident"), bundle.tree("base")
    measured = cache.evaluate(tree, window, spec.workspace, spec.gate)
    (entry,) = _records(tmp_path).root.glob("*/*.json")
    entry.write_text(json.dumps(forge(json.loads(entry.read_text()))))
    again = cache.evaluate(tree, window, spec.workspace, spec.gate)
    assert not again.cached and again.evaluation.metrics == measured.evaluation.metrics and len(runs) == 2
    assert cache.evaluate(tree, window, spec.workspace, spec.gate).cached


def _payload(envelope: dict[str, Any]) -> dict[str, Any]:
    return dict(json.loads(base64.b64decode(envelope["payload"])))


def _with_payload(envelope: dict[str, Any], document: dict[str, Any]) -> dict[str, Any]:
    return {**envelope, "payload": base64.b64encode(json.dumps(document).encode()).decode()}


def test_an_entry_whose_metric_was_changed_in_the_store_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    def better(envelope: dict[str, Any]) -> dict[str, Any]:
        document = _payload(envelope)
        return _with_payload(envelope, {**document, "metrics": {k: 1.0 for k in document["metrics"]}})

    _forged_entry(tmp_path, monkeypatch, runs, better)


def test_an_entry_signed_by_a_service_that_does_not_measure_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    """The publisher's key is registered and its signature holds, but the publisher never measures."""

    def resigned(envelope: dict[str, Any]) -> dict[str, Any]:
        document = {**_payload(envelope), "metrics": {k: 1.0 for k in _payload(envelope)["metrics"]}}
        made = sign_envelope(canonical_bytes(document), envelope["payloadType"], KEYS.keys["publisher"])
        return dict(made.model_dump(mode="json"))

    _forged_entry(tmp_path, monkeypatch, runs, resigned)


def test_an_entry_signed_by_an_unregistered_key_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    def resigned(envelope: dict[str, Any]) -> dict[str, Any]:
        made = sign_envelope(base64.b64decode(envelope["payload"]), envelope["payloadType"], generate_key("diagnoser"))
        return dict(made.model_dump(mode="json"))

    _forged_entry(tmp_path, monkeypatch, runs, resigned)


def test_an_unsigned_entry_of_the_format_before_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    """What the cache wrote before its entries were signed: the document itself, with its key."""
    _forged_entry(
        tmp_path, monkeypatch, runs, lambda envelope: {**_payload(envelope), "format": "modelguard-evaluation/1"}
    )


def test_a_store_that_does_not_answer_measures_again_and_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, runs: list[Path]
) -> None:
    bundle, cache = _bundle(tmp_path), _cache(tmp_path, monkeypatch)
    spec, window, tree = bundle.spec, _window(bundle, "incident"), bundle.tree("base")
    _records(tmp_path).root.parent.mkdir(parents=True)
    _records(tmp_path).root.write_text("a file where the folder should be")
    first = cache.evaluate(tree, window, spec.workspace, spec.gate)
    second = cache.evaluate(tree, window, spec.workspace, spec.gate)
    assert (first.cached, second.cached, len(runs)) == (False, False, 2)
    assert second.evaluation.metrics == first.evaluation.metrics


def test_a_service_built_before_its_key_registry_measures_until_the_registry_is_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry is read when it appears (a lookup that misses looks again); until then nothing verifies."""
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(keys_module, "RELOAD_INTERVAL_S", 0.0)
    settings = load_settings()
    cache = shared_evaluation_cache(settings, KEYS.keys["detector"])
    measured = ModelEvaluation({"auc": 0.75}, "self_reported", CommandResult(["evaluate"], 0, "", "", duration_s=1.0))
    cache.put("cd" * 32, measured)
    assert cache.get("cd" * 32) is None  # no registry yet: not read

    settings.key_registry_path.parent.mkdir(parents=True, exist_ok=True)
    settings.key_registry_path.write_text(json.dumps(KEYS.registry.to_document()))

    kept = cache.get("cd" * 32)
    assert kept is not None and kept.metrics == {"auc": 0.75}


def test_digests_of_several_pairs_read_each_tree_and_file_once_and_agree_with_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trees = []
    for revision in ("base", "candidate"):
        tree = tmp_path / revision
        (tree / "pkg").mkdir(parents=True)
        (tree / "pkg" / "model.py").write_text(f"# {revision}\n")
        trees.append(tree)
    windows = []
    names: tuple[Literal["approval", "incident"], ...] = ("approval", "incident")
    for name in names:
        folder = tmp_path / "data" / name
        folder.mkdir(parents=True)
        (folder / "train.csv").write_text(f"x,label\n1,{name}\n")
        (folder / "eval.csv").write_text(f"x,label\n2,{name}\n")
        windows.append(DataWindow(name=name, train=folder / "train.csv", eval=folder / "eval.csv"))
    pairs = [(tree, window) for tree in trees for window in windows]
    one_by_one = [cache_module.content_digest(tree, window) for tree, window in pairs]
    read: list[Path] = []

    def counted(read_one: Callable[[Path], Any]) -> Callable[[Path], Any]:
        def reading(path: Path) -> Any:
            read.append(path)
            return read_one(path)

        return reading

    monkeypatch.setattr(cache_module, "tree_digests", counted(snapshot.tree_digests))
    monkeypatch.setattr(cache_module, "file_digest", counted(snapshot.file_digest))
    assert cache_module.content_digests(pairs) == one_by_one
    assert len(set(one_by_one)) == 4  # every tree and every window counts
    assert len(read) == len(set(read)) == 6  # two trees, four data files: each once
