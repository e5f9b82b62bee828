"""propose_repair: a diagnosis in; a guarded patch, "no code repair: the cause is in the data", or a reasoned
withholding out. Both revisions are only read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from contracts.events.diagnosis import DiagnosisCompleted
from services.repairer.handler import RepairProposal, RepairWithholding, propose_repair
from services.repairer.patch_guard import GuardViolation, changed_lines_of
from tests.support.parse_counting import counted_parses
from tests.support.sample_diagnosis import diagnosis_abstained, diagnosis_completed
from tests.support.typed_policy import repair_section, workspace_policy
from tests.unit.repairer.strategies.patched_trees import write_tree

FEATURES = 'def monthly(total: float, months: int) -> float:\n    """Per month."""\n    return total / months\n'
BASE = 'def monthly(total: float, months: int) -> float:\n    """Per month."""\n    return total / max(months, 1)\n'
LOADER = 'import pandas as pd\n\n\ndef load(path):\n    return pd.read_csv(path)["tenure_months"]\n'
POLICY = repair_section(
    {
        "strategies": ["guarded_division", "revert_change", "column_rename", "null_guard", "unseen_category"],
        "allowed_paths": ["pkg/*.py"],
        "max_files": 1,
        "max_changed_lines": 6,
        "protected_paths": ["tests/**"],
    }
)
SPEC = workspace_policy(evaluate=["python", "evaluate.py", "--data", "{data}"])
OWNERS = {"model_owners": ["urn:li:corpuser:ana"], "upstream_owners": ["urn:li:corpuser:data-eng"]}


def diagnosis(hypothesis: str = "feature_transformation", suspect: dict[str, Any] | None = None) -> DiagnosisCompleted:
    """A diagnosis naming ``hypothesis`` (a feature transformation) in ``pkg/features.py``'s ``monthly``."""
    suspected = suspect or {"file": "pkg/features.py", "function": "monthly", "divisor": "months"}
    return diagnosis_completed(hypothesis, confidence=0.9, suspect=suspected)


def completed(
    hypothesis: str, hints: dict[str, Any], evidence: list[dict[str, Any]] | None = None
) -> DiagnosisCompleted:
    """A diagnosis with no suspect: the hypothesis, its repair hints, and the context's owners."""
    return diagnosis_completed(hypothesis, hints=hints, context_summary=OWNERS, evidence=evidence or [])


def workspace(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    return write_tree(tmp_path / "candidate", files or {"pkg/features.py": FEATURES, "pkg/loader.py": LOADER})


def test_proposes_the_guarded_division_patch(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    result = propose_repair(diagnosis(), root, POLICY, SPEC)
    assert isinstance(result, RepairProposal)
    assert (result.strategy, result.file, result.function) == ("guarded_division", "pkg/features.py", "monthly")
    assert (result.added_lines, result.removed_lines) == (2, 0)
    assert result.inserted_lines == ("    if months <= 0:", "        return 0.0")
    assert result.guard.allowed and len(result.patch_sha256) == 64
    assert (root / "pkg" / "features.py").read_text(encoding="utf-8") == FEATURES


def test_falls_back_to_revert_change_when_the_division_is_not_the_candidates(tmp_path: Path) -> None:
    candidate = FEATURES.replace("return total / months", "return total / months * 2")
    base = write_tree(tmp_path / "base", {"pkg/features.py": FEATURES})
    result = propose_repair(
        diagnosis(), workspace(tmp_path, {"pkg/features.py": candidate}), POLICY, SPEC, base_dir=base
    )
    assert isinstance(result, RepairProposal) and result.strategy == "revert_change"
    assert result.inserted_lines == ("    return total / months",)


def test_the_smaller_of_two_permitted_edits_is_proposed(tmp_path: Path) -> None:
    """Both strategies answer: restoring the base's one-line assert beats a two-line guard; a two-line guard beats
    restoring a rewritten function."""
    asserted = FEATURES.replace('    """Per month."""\n', '    """Per month."""\n    assert months > 0\n')
    base = write_tree(tmp_path / "base", {"pkg/features.py": asserted})
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
    assert isinstance(result, RepairProposal) and result.strategy == "revert_change"
    assert (result.added_lines, result.removed_lines) == (1, 0)
    rewritten = asserted.replace(
        "    return total / months\n", "    per_month = total / months\n    return per_month\n"
    )
    base = write_tree(tmp_path / "rewritten", {"pkg/features.py": rewritten})
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
    assert isinstance(result, RepairProposal) and result.strategy == "guarded_division"
    assert (result.added_lines, result.removed_lines) == (2, 0)


def test_the_guard_checks_the_smallest_edit_first_and_a_larger_one_only_when_the_smaller_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A guard check is most of the repairer's time (about 30 ms each on the churn incident): the edits are checked
    from the smallest, and the first permitted is the proposal, as when every edit was checked."""
    import services.repairer.handler as handler

    checked: list[str] = []
    refused: set[str] = set()
    real = handler.check_patch

    def spying(patch: Any, *args: Any, **kwargs: Any) -> Any:
        checked.append(patch.strategy)
        verdict = real(patch, *args, **kwargs)
        if patch.strategy in refused:
            rule = GuardViolation(rule="path_protected", detail="refused by the test")
            return verdict.model_copy(update={"allowed": False, "violations": (rule,)})
        return verdict

    monkeypatch.setattr(handler, "check_patch", spying)
    asserted = FEATURES.replace('    """Per month."""\n', '    """Per month."""\n    assert months > 0\n')
    base = write_tree(tmp_path / "base", {"pkg/features.py": asserted})
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
    assert isinstance(result, RepairProposal) and result.strategy == "revert_change"
    assert checked == ["revert_change"], "the two-line guard is never checked once the one-line revert passes"
    assert changed_lines_of(result.unified_diff) == result.added_lines + result.removed_lines == 1

    checked.clear()
    refused.add("revert_change")
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
    assert isinstance(result, RepairProposal) and result.strategy == "guarded_division"
    assert checked == ["revert_change", "guarded_division"]

    checked.clear()
    refused.add("guarded_division")
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
    assert isinstance(result, RepairWithholding) and result.reason_code == "guard_rejected"
    assert checked == ["revert_change", "guarded_division"] and len(result.violations) == 2


def test_the_guard_checks_of_one_handling_share_their_parsed_trees_and_another_handling_has_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file before the edits and the base revision's are the same for every edit of a handling: parsed (and
    analysed) once for all its guard checks; nothing is kept from one handling to the next."""
    import services.repairer.handler as handler

    shared: list[list[object]] = []
    real = handler.check_patch

    def spying(patch: Any, *args: Any, **kwargs: Any) -> Any:
        shared[-1].append(kwargs["trees"])
        verdict = real(patch, *args, **kwargs)
        if patch.strategy == "revert_change":
            rule = GuardViolation(rule="path_protected", detail="refused by the test")
            return verdict.model_copy(update={"allowed": False, "violations": (rule,)})
        return verdict

    monkeypatch.setattr(handler, "check_patch", spying)
    asserted = FEATURES.replace('    """Per month."""\n', '    """Per month."""\n    assert months > 0\n')
    base = write_tree(tmp_path / "base", {"pkg/features.py": asserted})
    for _ in range(2):
        shared.append([])
        result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
        assert isinstance(result, RepairProposal) and result.strategy == "guarded_division"
    first, second = shared
    assert len(first) == 2 and first[0] is first[1] is not None
    assert len(second) == 2 and second[0] is second[1] and second[0] is not first[0]


def test_one_handling_parses_each_text_once_and_the_next_handling_parses_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The strategies and the patch guard read the same texts (the file before the edit, the edited file, the base
    revision's): each is parsed once per handling (`shared_parses`), where it used to be parsed twice."""
    parsed = counted_parses(monkeypatch)
    base = write_tree(tmp_path / "base", {"pkg/features.py": FEATURES.replace("monthly", "per_month")})
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
    assert isinstance(result, RepairProposal) and result.strategy == "guarded_division"
    texts = {FEATURES, FEATURES.replace("monthly", "per_month")}
    assert texts <= set(parsed)  # the candidate's and the base revision's files, and the edited one
    assert len(parsed) == len(set(parsed)) >= 3
    first = len(parsed)
    propose_repair(diagnosis(), workspace(tmp_path / "again"), POLICY, SPEC, base_dir=base)
    assert len(parsed) == 2 * first


def test_a_division_revert_and_guard_of_the_same_size_keep_the_catalogue_order(tmp_path: Path) -> None:
    base = write_tree(tmp_path / "base", {"pkg/features.py": BASE})
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY, SPEC, base_dir=base)
    assert isinstance(result, RepairProposal) and result.strategy == "guarded_division"


def test_the_event_payload_with_repair_hints_drives_column_rename(tmp_path: Path) -> None:
    hints = {"renamed_columns": [{"old": "tenure_months", "new": "tenure"}]}
    result = propose_repair(completed("upstream_schema_change", hints), workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairProposal) and result.strategy == "column_rename"
    assert result.files == ("pkg/loader.py",) and result.function is None


def test_the_values_the_diagnosis_saw_decide_whether_one_expression_reads_them(tmp_path: Path) -> None:
    parser = (
        "def parse_amount(value, default=0.0):\n    try:\n        return float(value)\n"
        "    except (TypeError, ValueError):\n        return default\n\n\n"
        'def amounts(rows):\n    return [parse_amount(row["quoted_amount"]) for row in rows]\n'
    )
    hints = {"text_numeric_columns": ["quoted_amount"]}
    retyped = {"quoted_amount": {"examples": ["$1,019.54", "USD 845.00"], "now": "numeric_text"}}
    payload = completed("type_conversion", hints, [{"kind": "data.source_types", "values": {"retyped": retyped}}])
    policy = POLICY.model_copy(update={"strategies": ("numeric_coercion",), "max_changed_lines": 40})
    result = propose_repair(payload, workspace(tmp_path, {"pkg/features.py": parser}), policy, SPEC)
    assert isinstance(result, RepairProposal) and (result.added_lines, result.removed_lines) == (1, 1)
    assert result.inserted_lines[0].startswith('        return float(str(value).replace(",", "").strip(')
    retyped["quoted_amount"]["examples"].append("7,25")
    payload = completed("type_conversion", hints, [{"kind": "data.source_types", "values": {"retyped": retyped}}])
    result = propose_repair(payload, workspace(tmp_path / "comma", {"pkg/features.py": parser}), policy, SPEC)
    assert isinstance(result, RepairProposal) and "def _number_text(value: object) -> object:" in result.inserted_lines


def test_a_data_cause_without_a_code_repair_names_the_owners_to_notify(tmp_path: Path) -> None:
    result = propose_repair(completed("covariate_drift", {}), workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairWithholding)
    assert (result.decision, result.reason_code) == ("no_code_repair", "cause_in_data")
    # a summary from before contracts 1.1: no owner records, the flat lists as they were (model, then upstream)
    assert result.owners == () and result.owner_urns == ("urn:li:corpuser:ana", "urn:li:corpuser:data-eng")
    assert "notify urn:li:corpuser:ana, urn:li:corpuser:data-eng" in result.reason


def test_nulls_without_a_declared_fill_are_a_data_cause_and_with_one_a_null_guard(tmp_path: Path) -> None:
    payload = completed("source_data_quality", {"null_columns": ["tenure_months"]})
    undeclared = propose_repair(payload, workspace(tmp_path), POLICY, SPEC)
    assert isinstance(undeclared, RepairWithholding) and undeclared.reason_code == "cause_in_data"
    assert "declares no fill" in undeclared.reason
    declared = propose_repair(
        payload, workspace(tmp_path), POLICY, SPEC.model_copy(update={"null_fills": {"tenure_months": 0}})
    )
    assert isinstance(declared, RepairProposal) and declared.strategy == "null_guard"


def test_unseen_categories_without_a_declared_default_are_a_data_cause(tmp_path: Path) -> None:
    payload = completed("category_mapping", {"unseen_categories": {"plan": ["enterprise"]}})
    result = propose_repair(payload, workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "cause_in_data"


def test_a_missing_hint_is_a_refusal_not_a_data_cause(tmp_path: Path) -> None:
    result = propose_repair(completed("upstream_schema_change", {}), workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "strategy_refused"
    assert "names no renamed column" in result.reason


def test_withholds_when_the_diagnosis_abstained(tmp_path: Path) -> None:
    result = propose_repair(diagnosis_abstained("two causes are close"), workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairWithholding)
    assert result.reason_code == "diagnosis_abstained" and "two causes are close" in result.reason


def test_withholds_when_the_policy_permits_no_strategy_for_the_hypothesis(tmp_path: Path) -> None:
    reasons = {
        "type_conversion": "the policy permits none of ['numeric_coercion'] for 'type_conversion'",
        "unknown": "no strategy answers the hypothesis 'unknown'",
    }
    for hypothesis, reason in reasons.items():
        result = propose_repair(diagnosis(hypothesis), workspace(tmp_path), POLICY, SPEC)
        assert isinstance(result, RepairWithholding) and result.reason_code == "no_applicable_strategy"
        assert (result.reason, result.hypothesis) == (reason, hypothesis)
    result = propose_repair(diagnosis(), workspace(tmp_path), POLICY.model_copy(update={"strategies": ()}), SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "no_applicable_strategy"


def test_withholds_when_every_strategy_refuses(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"pkg/features.py": "def monthly(total, months):\n    return total * months\n"})
    result = propose_repair(diagnosis(), root, POLICY, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "strategy_refused"
    assert [refusal.strategy for refusal in result.refusals] == ["guarded_division", "revert_change"]


def test_withholds_when_the_guard_rejects_the_patch(tmp_path: Path) -> None:
    root = workspace(tmp_path, {"tests/features.py": FEATURES})
    suspect = {"file": "tests/features.py", "function": "monthly"}
    result = propose_repair(
        diagnosis(suspect=suspect), root, POLICY.model_copy(update={"allowed_paths": ("**/*.py",)}), SPEC
    )
    assert isinstance(result, RepairWithholding) and result.reason_code == "guard_rejected"
    assert "path_protected" in {violation.rule for violation in result.violations}


def test_never_reads_outside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text(FEATURES)
    suspect = {"file": "../secret.py", "function": "monthly"}
    result = propose_repair(diagnosis(suspect=suspect), workspace(tmp_path), POLICY, SPEC)
    assert isinstance(result, RepairWithholding) and result.reason_code == "strategy_refused"
    assert "../secret.py is not a readable file" in result.reason


@pytest.mark.parametrize("newline", ["\r", "\r\n"], ids=["lone CR", "CRLF"])
def test_a_file_whose_lines_end_in_cr_is_repaired_guarded_and_applied_with_its_endings(
    tmp_path: Path, newline: str
) -> None:
    """The whole path of a repair of an old-Mac-style file (one line to git): the repairer writes the guard in the
    file's own line endings, the guard passes it, and ``git apply`` (the validator's) gives the file Python reads."""
    from services.validator.sandbox import apply_patch

    features = FEATURES.replace("\n", newline)
    root = workspace(tmp_path, {"pkg/features.py": features, "pkg/loader.py": LOADER})
    result = propose_repair(diagnosis(), root, POLICY, SPEC)
    assert isinstance(result, RepairProposal), result
    assert result.strategy == "guarded_division" and result.guard.allowed
    applied = apply_patch(root, result.unified_diff)
    assert applied.applied, applied.detail
    expected = features.replace(
        f"{newline}    return total",
        f"{newline}    if months <= 0:{newline}        return 0.0{newline}    return total",
    )
    assert (root / "pkg" / "features.py").read_bytes().decode("utf-8") == expected
