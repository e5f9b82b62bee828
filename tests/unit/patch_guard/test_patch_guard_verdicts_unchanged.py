"""The guard's reports on the hostile corpus are exactly the ones it gave before its trees were shared.

``corpus/reports.json`` holds, for each corpus patch judged against the corpus workspace and by its hunks alone, the
SHA-256 of its whole report (every check's status, reason and findings, the files and line counts) and, to read, the
findings of the checks that failed: the reports the guard gave when every check parsed and walked the files on its
own (the code of commit ce5d4a1). Sharing the parsed trees, their walks and their name resolution
between checks, and between the guard calls of one repair handling, must not change one word of them.

To write the file again (only from code whose reports are known right): ``json.dumps(judge_corpus(...), indent=1,
sort_keys=True)`` against ``build_workspace`` with the corpus policy.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import EffectivePolicy, load_central_policy, narrowed_policy
from libs.patch_guard.report import GuardReport
from libs.patch_guard.source_trees import SourceTrees
from tests.unit.patch_guard.model_workspace import CONFIG, build_workspace

CORPUS = Path(__file__).parent / "corpus"
REPORTS = CORPUS / "reports.json"


def report_summary(report: GuardReport) -> dict[str, Any]:
    """The digest of everything the report says, and the failed checks' findings as text."""
    whole = {
        "files": list(report.files),
        "added": report.added_lines,
        "removed": report.removed_lines,
        "checks": [
            [check.name, check.status, check.reason, [[f.path, f.line, f.detail] for f in check.findings]]
            for check in report.checks
        ],
    }
    canonical = json.dumps(whole, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    failed = {check.name: [f"{f.path}:{f.line}: {f.detail}" for f in check.findings] for check in report.failed()}
    return {"sha256": hashlib.sha256(canonical).hexdigest(), "failed": failed}


def judge_corpus(workspace: Path, policy: EffectivePolicy, trees: SourceTrees | None = None) -> dict[str, Any]:
    """Each patch judged against ``workspace`` and by its hunks alone; ``trees``: one tree cache every call reads,
    as the guard calls of one repair handling do (None: each call its own)."""
    summaries: dict[str, Any] = {}
    for patch in sorted(CORPUS.glob("*.patch")):
        raw = patch.read_bytes()
        for mode, where in (("workspace", workspace), ("hunks", None)):
            request = GuardRequest(patch=raw, policy=policy, workspace=where, trees=trees)
            summaries[f"{patch.stem} ({mode})"] = report_summary(check_patch(request))
    return summaries


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("model"))


@pytest.fixture(scope="module")
def policy() -> EffectivePolicy:
    return narrowed_policy(load_central_policy(), CONFIG)


@pytest.mark.parametrize("shared", [False, True], ids=["a tree cache per call", "one tree cache for every call"])
def test_every_corpus_report_is_the_one_recorded(workspace: Path, policy: EffectivePolicy, shared: bool) -> None:
    recorded = json.loads(REPORTS.read_text(encoding="utf-8"))
    judged = judge_corpus(workspace, policy, SourceTrees() if shared else None)
    assert sorted(judged) == sorted(recorded)
    changed = [name for name in recorded if judged[name] != recorded[name]]
    assert not changed, changed
