"""The evaluation cache on a real (tiny) workspace, run in the sandbox: the same tree, window and command run once;
any byte of the tree or the window, or any word of the command, changed runs again; an entry that does not read
back is a miss; a failed run is not kept; and the workspace cannot reach the cache to poison it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import pytest

import libs.workspace.evaluation_cache as cache_module
from libs.bundle.load import load_bundle
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.data_windows import DataWindow
from libs.workspace.evaluation_cache import EvaluationCache
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


def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EvaluationCache:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))  # the sandbox hides it from every command
    return EvaluationCache(tmp_path / "home" / "evaluation-cache")


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
    (entry,) = (tmp_path / "home" / "evaluation-cache").glob("*/*.json")
    for forged in ("{not json", json.dumps({**json.loads(entry.read_text()), "key": "0" * 64})):
        entry.write_text(forged)
        again = cache.evaluate(bundle.tree("base"), window, spec.workspace, spec.gate)
        assert not again.cached and again.evaluation.metrics == measured.evaluation.metrics
    assert len(runs) == 3 and cache.evaluate(bundle.tree("base"), window, spec.workspace, spec.gate).cached


def test_the_workspace_cannot_reach_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle, cache = _bundle(tmp_path), _cache(tmp_path, monkeypatch)
    spec, window, tree = bundle.spec, _window(bundle, "incident"), bundle.tree("candidate")
    cache.root.mkdir(parents=True)
    (tree / "predict.py").write_text(POISONER.format(cache=str(cache.root)), encoding="utf-8")

    measured = cache.evaluate(tree, window, spec.workspace, spec.gate)

    assert sorted(p.name for p in cache.root.rglob("*")) == sorted([measured.key[:2], f"{measured.key}.json"])
    assert measured.evaluation.scored is not None
    assert set(measured.evaluation.scored.predictions) == {1.0}  # what it predicted is all that was kept
