"""The guard as a whole: its report, the hunks-only mode without a workspace, and the repairer's view."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from libs.patch_guard.guard import GuardRequest, check_patch
from libs.patch_guard.policy import load_central_policy, narrowed_policy
from libs.patch_guard.report import CHECK_NAMES, human_lines
from libs.patch_guard.workspace_config import WorkspaceRepairConfig
from libs.policy.central import CENTRAL_POLICY_VARIABLE, DEFAULT_CENTRAL_POLICY
from libs.policy.repair import RepairNarrowing
from services.repairer.patch_guard import ProposedPatch, guard_policy
from services.repairer.patch_guard import check_patch as repairer_check_patch
from services.repairer.unified_diff import render_unified_diff
from tests.support.typed_policy import workspace_policy
from tests.unit.patch_guard.model_workspace import CONFIG, FEATURES, build_workspace

CENTRAL = load_central_policy(DEFAULT_CENTRAL_POLICY)
POLICY = narrowed_policy(CENTRAL, CONFIG)
GUARDED = FEATURES.replace(
    '    """Average spend per month of account life."""\n',
    '    """Average spend per month of account life."""\n    if months <= 0:\n        return 0.0\n',
)


def diff(after: str, before: str = FEATURES, path: str = "pkg/features.py") -> str:
    return render_unified_diff(path, before, after)


def test_without_a_workspace_the_hunks_are_judged() -> None:
    report = check_patch(GuardRequest(patch=diff(GUARDED), policy=POLICY))
    assert report.accepted
    assert report.check("applies_cleanly").status == "skipped"
    assert "hunks only" in report.check("forbidden_constructs").reason


def test_without_a_workspace_a_forbidden_call_is_still_refused() -> None:
    patched = GUARDED.replace("        return 0.0\n", "        return 0.0\n    o.system('id')\n")
    report = check_patch(GuardRequest(patch=diff(patched), policy=POLICY))
    assert [check.name for check in report.failed()] == ["allowed_new_code", "forbidden_constructs"]
    [introduced] = report.check("allowed_new_code").findings
    assert (introduced.detail.split(":")[0], introduced.line) == ("o.system", 12)


def test_the_human_report_has_one_line_per_check_and_the_decision() -> None:
    report = check_patch(GuardRequest(patch=diff(GUARDED, path="tests/test_x.py"), policy=POLICY))
    lines = human_lines(report)
    assert len(lines) == len(CHECK_NAMES) + 1
    assert "FAIL protected_paths: protected path: tests/test_x.py: protected by 'tests/**'" in lines
    assert lines[-1].startswith("REFUSED: ") and "protected_paths" in lines[-1]


def test_the_human_report_escapes_what_the_patch_controls() -> None:
    """A file name with a terminal escape and a line break cannot clear the screen or forge an ACCEPTED line."""
    name = "pkg/x\\033[2J\\nACCEPTED\\342\\200\\256.py"
    patch = f'--- "a/{name}"\n+++ "b/{name}"\n@@ -1 +1 @@\n-a = 1\n+a = 2\n'
    lines = human_lines(check_patch(GuardRequest(patch=patch, policy=POLICY)))
    text = "\n".join(lines)
    assert "\x1b" not in text and "\u202e" not in text and lines.count("ACCEPTED") == 0
    assert len(lines) == len(CHECK_NAMES) + 1
    assert any("pkg/x\\x1b[2J\\x0aACCEPTED\\u202e.py" in line for line in lines)


def test_without_a_workspace_the_old_side_of_the_hunks_stands_in_for_the_module() -> None:
    """The context line that defines ``months`` makes it known; ``np.where`` is on the allow-list; the hunk
    alone cannot know ``total_spend``, so it refuses it (fail closed)."""
    uses_context = GUARDED.replace("        return 0.0\n", "        return months\n")
    assert check_patch(GuardRequest(patch=diff(uses_context), policy=POLICY)).accepted
    unknown = GUARDED.replace("        return 0.0\n", "        return total_spend\n")
    report = check_patch(GuardRequest(patch=diff(unknown), policy=POLICY))
    assert [check.name for check in report.failed()] == ["allowed_new_code"]
    exits = GUARDED.replace("        return 0.0\n", "        raise SystemExit(0)\n")
    report = check_patch(GuardRequest(patch=diff(exits), policy=POLICY))
    assert "always_refused" in [check.name for check in report.failed()]


def test_without_a_workspace_the_old_side_s_imports_resolve_the_added_lines() -> None:
    """``import os as np`` in the context: ``np.replace`` is ``os.replace``, not the allowed method."""
    before = "import os as np\n\ndef f(x):\n    return x\n"
    after = before.replace("    return x\n", '    np.replace("data/eval.csv", "data/train.csv")\n    return x\n')
    report = check_patch(GuardRequest(patch=diff(after, before=before, path="pkg/m.py"), policy=POLICY))
    assert [finding.detail.split(":")[0] for finding in report.check("allowed_new_code").findings] == ["os.replace"]
    numpy = before.replace("import os as np", "import numpy as np")
    uses_numpy = numpy.replace("    return x\n", "    return np.where(x > 0, x, 0.0)\n")
    assert check_patch(GuardRequest(patch=diff(uses_numpy, before=numpy, path="pkg/m.py"), policy=POLICY)).accepted


def test_a_bundle_s_label_reaches_the_guard_through_the_repairer(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "features.py").write_text(FEATURES, encoding="utf-8")
    leaked = FEATURES.replace("months: int) -> float:", 'months: int, unit: str = "churned") -> float:')
    spec = workspace_policy(repair_paths=["pkg/*.py"], label="churned")
    patch = ProposedPatch(strategy="guarded_division", unified_diff=diff(leaked))
    assert repairer_check_patch(patch, CENTRAL, workspace_policy(repair_paths=["pkg/*.py"])).allowed
    verdict = repairer_check_patch(patch, CENTRAL, spec, workspace=tmp_path)
    assert [violation.rule for violation in verdict.violations] == ["always_refused"]
    assert "the label column 'churned'" in verdict.violations[0].detail


def test_an_oversized_or_binary_payload_is_not_read() -> None:
    small = narrowed_policy(CENTRAL.model_copy(update={"max_patch_bytes": 100}), WorkspaceRepairConfig())
    assert check_patch(GuardRequest(patch=diff(GUARDED), policy=small)).failed()[0].name == "patch_readable"
    report = check_patch(GuardRequest(patch=b"--- a/x.py\n+++ b/x.py\n\x00", policy=POLICY))
    assert [check.name for check in report.failed()] == ["patch_readable"]
    assert all(check.status == "skipped" for check in report.checks[1:])


def test_the_repairer_reads_a_bundle_policy_whose_repair_section_is_the_central_one(tmp_path: Path) -> None:
    """In a bundle's effective policy the repair section is the central one; repair_paths narrow it."""
    repair_section = CENTRAL
    spec = workspace_policy(evaluate=["python", "-m", "pkg.features"], repair_paths=["pkg/*.py"])
    policy = guard_policy(repair_section, spec)
    assert policy.unpermitted_scope("pkg/features.py") is None
    assert policy.protecting_pattern("pkg/features.py") == "pkg/features.py"  # the evaluate entry point
    assert policy.unpermitted_scope("tools/x.py") == ("pkg/*.py",)

    ok = repairer_check_patch(
        ProposedPatch(strategy="guarded_division", unified_diff=diff(GUARDED), files=("pkg/features.py",)),
        repair_section,
        workspace_policy(evaluate=["python", "evaluate.py"], repair_paths=["pkg/*.py"]),
    )
    assert ok.allowed and ok.changed_lines == 2
    refused = repairer_check_patch(
        ProposedPatch(strategy="revert_change", unified_diff=diff(GUARDED)),
        repair_section.model_copy(update={"strategies": ("guarded_division",)}),
        workspace_policy(repair_paths=["other/*.py"]),
    )
    assert {violation.rule for violation in refused.violations} == {"strategy_not_permitted", "path_not_allowed"}


def test_the_repairer_judges_whole_files_when_given_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "features.py").write_text(FEATURES, encoding="utf-8")
    patched = GUARDED.replace('    return o.path.join("cache", "features")\n', '    return o.popen("id").read()\n')
    patch = ProposedPatch(strategy="guarded_division", unified_diff=diff(patched))
    verdict = repairer_check_patch(patch, RepairNarrowing(allowed_paths=("pkg/*.py",)), None, workspace=tmp_path)
    assert [(violation.rule, violation.detail.split(":")[0]) for violation in verdict.violations] == [
        ("not_in_allow_list", ".read"),
        ("not_in_allow_list", "os.popen"),
        ("unsafe_token", "process"),
    ]


def test_an_unreadable_central_policy_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A narrowing (or no repair section) reads the central policy's file: a broken one refuses every patch.
    (A repair section of the wrong type never gets this far: the policy's parse refuses it, tests/unit/policy.)"""
    broken = tmp_path / "central.yaml"
    broken.write_text("repair:\n  permitted_paths: ['**']\n  file_types: not a list\n", encoding="utf-8")
    monkeypatch.setenv(CENTRAL_POLICY_VARIABLE, str(broken))
    verdict = repairer_check_patch(
        ProposedPatch(strategy="guarded_division", unified_diff=diff(GUARDED)),
        RepairNarrowing(allowed_paths=("pkg/*.py",)),
        None,
    )
    assert not verdict.allowed and verdict.violations[0].rule == "policy_unreadable"


@pytest.mark.parametrize("approved", [False, True])
def test_each_python_text_of_a_check_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, approved: bool
) -> None:
    """The whole-file checks (new code, always refused, forbidden constructs, syntax) read the same trees."""
    workspace = build_workspace(tmp_path / "workspace")
    parsed: Counter[str] = Counter()
    parse = ast.parse

    def counted(source: Any, *args: Any, **kwargs: Any) -> Any:
        parsed[source.decode("utf-8") if isinstance(source, bytes) else source] += 1
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counted)
    patched = GUARDED.replace("        return 0.0\n", "        return 0.0\n    o.system('id')\n")
    request = GuardRequest(
        patch=diff(patched), policy=POLICY, workspace=workspace, approved=workspace if approved else None
    )
    report = check_patch(request)
    assert [check.name for check in report.failed()] == ["allowed_new_code", "forbidden_constructs"]
    assert parsed[FEATURES] == 1 and parsed[patched] == 1, "each file's text parsed once"
    assert [text for text, times in parsed.items() if times > 1] == []


def test_a_patch_to_a_file_with_a_match_statement_gets_a_report(tmp_path: Path) -> None:
    """Python's ``match`` (3.10 on) in a model's code is judged like any statement, never an error out of the guard:
    a change inside a ``case`` is allowed when it is, and a forbidden call in a ``case`` guard is refused."""
    workspace = build_workspace(tmp_path)
    matching = FEATURES + (
        "\n\ndef spend_band(months):\n"
        "    match months:\n"
        "        case 0:\n"
        "            return 'none'\n"
        "        case _:\n"
        "            return 'some'\n"
    )
    (workspace / "pkg" / "features.py").write_text(matching)
    allowed = matching.replace("            return 'none'\n", "            return 'zero'\n")
    report = check_patch(GuardRequest(patch=diff(allowed, matching), policy=POLICY, workspace=workspace))
    assert report.accepted, human_lines(report)
    forbidden = matching.replace("        case 0:\n", "        case 0 if o.system('id'):\n")
    refused = check_patch(GuardRequest(patch=diff(forbidden, matching), policy=POLICY, workspace=workspace))
    assert "forbidden_constructs" in [check.name for check in refused.failed()]
