"""The referee on a real (tiny) workspace, run in the sandbox: ModelGuard computes the metric from the
predictions; whatever the workspace prints, or tries with the labels, does not move it."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.bundle.load import load_bundle
from libs.referee.held_out import write_features
from libs.workspace.commands import WorkspaceCommandFailed
from libs.workspace.data_windows import DataWindow
from libs.workspace.model_evaluation import evaluate_model
from tests.support.tiny_bundle import make_tiny_bundle

FAKE_VERDICT = """import json, sys
print(json.dumps({"metrics": {"accuracy": 0.99}}))
with open(sys.argv[sys.argv.index("--output") + 1], "w") as out:
    out.write("row_id,prediction\\n")
    for line in list(open(sys.argv[sys.argv.index("--features") + 1]))[1:]:
        out.write(line.split(",")[0] + ",0\\n")
"""
READS_THE_LABEL = """import csv, sys
rows = list(csv.DictReader(open(sys.argv[sys.argv.index("--features") + 1])))
with open(sys.argv[sys.argv.index("--output") + 1], "w") as out:
    out.write("row_id,prediction\\n")
    for r in rows:
        out.write(f"{r['row_id']},{r['label']}\\n")
"""
TAMPERS_WITH_ITS_FEATURES = """import os, sys
features = sys.argv[sys.argv.index("--features") + 1]
refused = []
attempts = (
    lambda: open(features, "a").write("9999,1\\n"), lambda: os.remove(features), lambda: os.chmod(features, 0o666)
)
for attempt in attempts:
    try:
        attempt()
    except OSError:
        refused.append(True)
print(len(refused), file=sys.stderr)
with open(sys.argv[sys.argv.index("--output") + 1], "w") as out:
    out.write("row_id,prediction\\n")
    for line in list(open(features))[1:]:
        out.write(line.split(",")[0] + ",1\\n")
"""
EXTRA_COLUMN = """import sys
with open(sys.argv[sys.argv.index("--output") + 1], "w") as out:
    out.write("row_id,prediction,note\\n0,1,secret\\n")
"""


def _bundle(tmp_path: Path, contract: str = "predict"):
    return load_bundle(make_tiny_bundle(tmp_path / "bundle", contract=contract))


def _window(bundle, name: str) -> DataWindow:
    return DataWindow(name=name, train=bundle.window_file(name, "train.csv"), eval=bundle.window_file(name, "eval.csv"))


def test_the_referee_scores_the_predictions_against_the_labels_it_kept(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    spec = bundle.spec
    base = evaluate_model(bundle.tree("base"), _window(bundle, "incident"), spec.workspace, spec.gate)
    candidate = evaluate_model(bundle.tree("candidate"), _window(bundle, "incident"), spec.workspace, spec.gate)
    assert base.source == candidate.source == "referee"
    assert base.metrics["accuracy"] > 0.8 > 0.2 > candidate.metrics["accuracy"]
    assert base.scored is not None and len(base.scored.labels) == 200
    assert base.scored.gate_metric(spec.gate) == base.metrics["accuracy"]


def test_a_workspace_that_prints_its_own_verdict_gets_the_referee_s(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    (bundle.tree("candidate") / "predict.py").write_text(FAKE_VERDICT, encoding="utf-8")
    result = evaluate_model(
        bundle.tree("candidate"), _window(bundle, "incident"), bundle.spec.workspace, bundle.spec.gate
    )
    assert result.metrics["accuracy"] < 0.7  # all-negative predictions on balanced rows, not the printed 0.99


def test_the_workspace_never_sees_the_label_column(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    (bundle.tree("candidate") / "predict.py").write_text(READS_THE_LABEL, encoding="utf-8")
    with pytest.raises(WorkspaceCommandFailed, match="KeyError: 'label'"):
        evaluate_model(bundle.tree("candidate"), _window(bundle, "incident"), bundle.spec.workspace, bundle.spec.gate)


def test_commands_share_a_window_s_features_and_none_can_change_them(tmp_path: Path) -> None:
    """The features of one window are split once and handed to every command that predicts it, read-only: a
    workspace that tries to append to, remove or open up its features changes nothing the next command reads."""
    bundle = _bundle(tmp_path)
    window, spec = _window(bundle, "incident"), bundle.spec
    before = evaluate_model(bundle.tree("base"), window, spec.workspace, spec.gate)
    (bundle.tree("candidate") / "predict.py").write_text(TAMPERS_WITH_ITS_FEATURES, encoding="utf-8")
    hostile = evaluate_model(bundle.tree("candidate"), window, spec.workspace, spec.gate)
    after = evaluate_model(bundle.tree("base"), window, spec.workspace, spec.gate)
    assert hostile.command.stderr.strip().startswith("3")  # all three attempts refused
    argv = [run.command.argv for run in (before, hostile, after)]
    features = {a[a.index("--features") + 1] for a in argv}
    assert len(features) == 1  # one split, shared
    assert after.metrics == before.metrics and after.scored is not None and before.scored is not None
    assert after.scored.labels == before.scored.labels
    assert after.scored.predictions.tolist() == before.scored.predictions.tolist()
    expected = tmp_path / "expected.csv"
    write_features(window.eval, spec.workspace.label, expected)
    assert Path(features.pop()).read_bytes() == expected.read_bytes()


def test_predictions_that_break_the_contract_fail_the_run(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    (bundle.tree("candidate") / "predict.py").write_text(EXTRA_COLUMN, encoding="utf-8")
    with pytest.raises(WorkspaceCommandFailed, match="unreadable predictions: the header must be row_id,prediction"):
        evaluate_model(bundle.tree("candidate"), _window(bundle, "incident"), bundle.spec.workspace, bundle.spec.gate)


def test_a_self_reported_metric_says_so_and_may_hold_only_the_gate_metric(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path, contract="evaluate")
    result = evaluate_model(bundle.tree("base"), _window(bundle, "approval"), bundle.spec.workspace, bundle.spec.gate)
    assert result.source == "self_reported" and result.scored is None
    (bundle.tree("base") / "evaluate.py").write_text(
        'import json\nprint(json.dumps({"metrics": {"accuracy": 0.9, "root:$6$secret": 1.0}}))\n', encoding="utf-8"
    )
    with pytest.raises(WorkspaceCommandFailed, match="1 undeclared metric name") as raised:
        evaluate_model(bundle.tree("base"), _window(bundle, "approval"), bundle.spec.workspace, bundle.spec.gate)
    assert "secret" not in str(raised.value).split("stderr tail")[0]


REBIND_JSON = """import json, sys
_dumps = json.dumps
json.dumps = lambda obj, *a, **k: _dumps({"metrics": {"accuracy": 0.99}})
"""
FILTER_STDOUT = """import sys


class _Filter:
    def write(self, text):
        return sys.__stdout__.write('{"metrics": {"accuracy": 0.99}}\\n')

    def flush(self):
        pass


sys.stdout = _Filter()
"""
EXIT_EARLY = """print('{"metrics": {"accuracy": 0.99}}')
raise SystemExit(0)
"""


@pytest.mark.parametrize("attack", [REBIND_JSON, FILTER_STDOUT, EXIT_EARLY], ids=["json-dumps", "stdout", "exit"])
def test_the_attacks_that_faked_a_self_reported_metric_move_nothing_under_the_referee(tmp_path: Path, attack) -> None:
    """The three patches that turned a regression into a pass through ``evaluate`` (a block in the package's
    ``__init__.py``) change nothing the referee reads: it scores the predictions file, not what is printed."""
    bundle = _bundle(tmp_path)
    package = bundle.tree("candidate") / "tiny" / "__init__.py"
    package.write_text(attack, encoding="utf-8")
    window, spec = _window(bundle, "incident"), bundle.spec
    if attack is EXIT_EARLY:  # it stops before any prediction is written: a failed run, never a pass
        with pytest.raises(WorkspaceCommandFailed, match="no predictions file"):
            evaluate_model(bundle.tree("candidate"), window, spec.workspace, spec.gate)
        return
    result = evaluate_model(bundle.tree("candidate"), window, spec.workspace, spec.gate)
    assert result.metrics["accuracy"] < 0.2  # the sign-flipped candidate's own predictions


LINKS_ITS_OUTPUT = """import os, sys
os.symlink({target!r}, sys.argv[sys.argv.index("--output") + 1])
"""


def test_an_output_written_as_a_link_is_refused_not_followed(tmp_path: Path) -> None:
    """The command names its predictions file a link to a file of ModelGuard's own machine, which the sandbox cannot
    read but the referee, reading outside it, could: here one that scores perfectly. The sandbox copies out only
    regular files the command wrote (`libs/sandbox/staging.py`), so the link never reaches the referee."""
    bundle = _bundle(tmp_path)
    window = _window(bundle, "incident")
    outside = tmp_path / "host-only" / "perfect.csv"
    outside.parent.mkdir()
    held = [line.split(",") for line in window.eval.read_text(encoding="utf-8").splitlines()[1:]]
    header = window.eval.read_text(encoding="utf-8").splitlines()[0].split(",")
    label = header.index("label")
    outside.write_text(
        "row_id,prediction\n" + "".join(f"{i},{row[label]}\n" for i, row in enumerate(held)), encoding="utf-8"
    )
    (bundle.tree("candidate") / "predict.py").write_text(LINKS_ITS_OUTPUT.format(target=str(outside)), encoding="utf-8")
    with pytest.raises(
        WorkspaceCommandFailed, match=r"did not copy these outputs: .*predictions\.csv: not a regular file"
    ):
        evaluate_model(bundle.tree("candidate"), window, bundle.spec.workspace, bundle.spec.gate)
