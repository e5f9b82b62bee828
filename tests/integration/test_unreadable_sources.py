"""A pull request whose Python ModelGuard's own analyses cannot read safely. The diagnoser, the repairer, the patch
guard and the validator parse the workspace's files to find what changed, what the model imports, where a column
is read and what a repair may touch. A file the parser refuses to build (a sum of 12,000 terms raises
RecursionError in ``ast.parse``) stopped the diagnosis: the incident was dead-lettered as a handler error and nobody
got a diagnosis. Beside it the pull request adds one the parser builds but that is too deep for a recursive reader
(``ast.unparse`` of a 400-term sum fails), and one that is not UTF-8 and declares no other encoding. Each is now one
more file that does not parse. Python's own rule for a file's bytes (PEP 263) decides what is text: a fourth file,
Latin-1 with a coding declaration, is valid Python, and every reader reads it as Python does (the repairer would
refuse to edit it: a repair edits UTF-8 source only).

The bundle is a model repository written by someone else (``fixtures/repos/checkout-fraud-scorer``); the pull
request adds the four files beside the model's package, where the repair may touch files, and nothing imports
them, so the incident is the same incident: the expected diagnosis, repair and validation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from libs.settings import load_settings
from modelguard.investigate import investigate
from tests.support.sample_events import REPAIRED_INCIDENT_EVENTS

BUNDLE = Path(__file__).resolve().parents[2] / "fixtures" / "repos" / "checkout-fraud-scorer"


def _with_unreadable_files(tmp_path: Path) -> Path:
    bundle = tmp_path / BUNDLE.name
    shutil.copytree(BUNDLE, bundle)
    package = bundle / "workspace" / "candidate" / "fraudscore"
    terms = " + ".join("1" for _ in range(12_000))
    (package / "lookup_table.py").write_text(f'"""Generated weights."""\nWEIGHT = {terms}\n', encoding="utf-8")
    deep = " + ".join("1" for _ in range(400))
    (package / "deep_table.py").write_text(f'"""Generated weights."""\nWEIGHT = {deep}\n', encoding="utf-8")
    (package / "legacy_codes.py").write_bytes(b'# exported from the old system\nCODES = {"caf\xe9": 1}\n')
    (package / "legacy_labels.py").write_bytes(
        b"# -*- coding: latin-1 -*-\n# export\xe9 de l'ancien syst\xe8me\n\n\n"
        b'def libell\xe9(code):\n    return {"caf\xe9": "boisson"}.get(code)\n'
    )
    return bundle


@pytest.mark.skipif(not BUNDLE.is_dir(), reason=f"the hand-made bundles are not in {BUNDLE.parent}")
def test_files_no_analysis_can_read_leave_the_incident_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path / "home"))
    expected = json.loads((BUNDLE / "expected.json").read_text(encoding="utf-8"))
    events = investigate(load_settings(), _with_unreadable_files(tmp_path), "ci-1", 7, lambda _event: None)
    by_type = {e.event.meta.event_type: e.event for e in events}
    assert list(by_type) == [*REPAIRED_INCIDENT_EVENTS]
    assert by_type["DiagnosisCompleted"].payload.hypothesis.value == expected["hypothesis"]
    assert by_type["RepairProposed"].payload.patch.strategy.value == expected["repair_strategy"]
    validation = by_type["RepairValidated"].payload.validation
    assert all(check.passed for check in validation.checks), validation.checks
