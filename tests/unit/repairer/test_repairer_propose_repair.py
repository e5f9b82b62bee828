"""propose_repair: a diagnosis in, a guarded patch or a reasoned withholding out; the workspace is only read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from services.repairer.handler import RepairProposal, RepairWithholding, propose_repair

FEATURES = 'def monthly(total: float, months: int) -> float:\n    """Per month."""\n    return total / months\n'
POLICY: dict[str, Any] = {
    "strategies": ["guarded_division"],
    "allowed_paths": ["pkg/*.py"],
    "max_files": 1,
    "max_changed_lines": 6,
    "protected_paths": ["tests/**"],
}
SPEC = {"evaluate": ["python", "evaluate.py", "--data", "{data}"]}


def diagnosis(**overrides: Any) -> dict[str, Any]:
    outcome: dict[str, Any] = {
        "decision": "diagnosed",
        "chosen_hypothesis": "feature_transformation",
        "confidence": 0.9,
        "suspected": {"file": "pkg/features.py", "function": "monthly", "divisor": "months"},
    }
    outcome.update(overrides)
    return outcome


def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "features.py").write_text(FEATURES, encoding="utf-8")
    return tmp_path


def test_proposes_the_guarded_division_patch(tmp_path: Path) -> None:
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairProposal)
    assert (result.strategy, result.file, result.function) == ("guarded_division", "pkg/features.py", "monthly")
    assert (result.added_lines, result.removed_lines) == (2, 0)
    assert result.guard.allowed
    assert len(result.patch_sha256) == 64
    assert (tmp_path / "pkg" / "features.py").read_text(encoding="utf-8") == FEATURES


def test_withholds_when_the_diagnosis_abstained(tmp_path: Path) -> None:
    result = propose_repair(
        {"decision": "abstained", "abstention_reason": "two causes are close"}, workspace(tmp_path), POLICY, SPEC
    )
    assert isinstance(result, RepairWithholding)
    assert result.reason_code == "diagnosis_abstained" and "two causes are close" in result.reason


def test_withholds_when_no_strategy_answers_the_hypothesis(tmp_path: Path) -> None:
    result = propose_repair(diagnosis(chosen_hypothesis="source_data_quality"), workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "no_applicable_strategy"


def test_withholds_when_the_strategy_refuses(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    (root / "pkg" / "features.py").write_text("def monthly(total, months):\n    return total * months\n")
    result = propose_repair(diagnosis(), root, POLICY, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "strategy_refused"
    assert result.refusals[0].strategy == "guarded_division"


def test_withholds_when_the_guard_rejects_the_patch(tmp_path: Path) -> None:
    result = propose_repair(diagnosis(), workspace(tmp_path), {**POLICY, "allowed_paths": ["other/*.py"]}, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "guard_rejected"
    assert [violation.rule for violation in result.violations] == ["path_not_allowed"]


def test_withholds_when_the_strategy_is_not_permitted_by_policy(tmp_path: Path) -> None:
    result = propose_repair(diagnosis(), workspace(tmp_path), {**POLICY, "strategies": []}, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "no_applicable_strategy"


def test_never_reads_outside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text(FEATURES)
    inner = tmp_path / "ws"
    inner.mkdir()
    result = propose_repair(
        diagnosis(suspected={"file": "../secret.py", "function": "monthly"}), workspace(inner), POLICY, SPEC
    )
    assert isinstance(result, RepairWithholding) and result.reason_code == "target_unreadable"
