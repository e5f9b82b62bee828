"""revert_change: only the statements the candidate changed go back to the base text; formatting stays."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from contracts.events.diagnosis import RepairHints, Suspect
from services.repairer.strategies import revert_change
from tests.unit.repairer.strategies.patched_trees import (
    diff_lines,
    edit_of,
    git_applied,
    load_module,
    refusal_of,
    repair_context,
)

FEATURES = "pkg/features.py"
TRAIN = "pkg/train.py"
BASE_FEATURES = '''"""Features."""

import numpy as np


def monthly_spend(total: np.ndarray, months: np.ndarray) -> np.ndarray:
    """Average spend per month; brand-new accounts have none yet."""
    safe = np.where(months > 0, months, 1)
    return np.where(months > 0, total / safe, 0.0)


def untouched(value: float) -> float:
    return value * 2
'''
CANDIDATE_FEATURES = '''"""Features."""

import numpy as np


def monthly_spend(
    total: np.ndarray,
    months: np.ndarray,
) -> np.ndarray:
    """Average spend per month."""
    return total / months


def untouched(value: float) -> float:
    return value * 2
'''
BASE_TRAIN = '''"""Training parameters."""

LEARNING_RATE = 0.1
# a comment that stays
EPOCHS = 20


def parameters(seed: int) -> dict:
    options = dict(
        learning_rate=LEARNING_RATE,
        epochs=EPOCHS,
        l2=0.01,
        seed=seed,
    )
    return options
'''
CANDIDATE_TRAIN = BASE_TRAIN.replace("LEARNING_RATE = 0.1", "LEARNING_RATE = 0.9").replace("l2=0.01", "l2=5.0")


def changed(*targets: tuple[str, str]) -> RepairHints:
    return RepairHints(changed_functions=[Suspect(file=file, function=function) for file, function in targets])


def test_restores_the_changed_statements_of_the_function_and_keeps_its_reformatted_signature(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path,
        {FEATURES: CANDIDATE_FEATURES},
        base={FEATURES: BASE_FEATURES},
        hints=changed((FEATURES, "monthly_spend")),
    )
    edit = edit_of(revert_change.propose(context))
    assert edit.function == "monthly_spend" and edit.files == (FEATURES,)
    assert diff_lines(edit.unified_diff) == [
        "-    return total / months",
        "+    safe = np.where(months > 0, months, 1)",
        "+    return np.where(months > 0, total / safe, 0.0)",
    ]
    module = load_module(git_applied(tmp_path, {FEATURES: CANDIDATE_FEATURES}, edit.unified_diff) / FEATURES)
    base = load_module(tmp_path / "base" / FEATURES)
    totals, months = np.array([120.0, 50.0, 30.0]), np.array([12, 0, 3])
    assert np.array_equal(module.monthly_spend(totals, months), base.monthly_spend(totals, months))


def test_the_suspect_is_the_target_without_changed_functions(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path,
        {FEATURES: CANDIDATE_FEATURES},
        base={FEATURES: BASE_FEATURES},
        suspect=Suspect(file=FEATURES, function="monthly_spend"),
    )
    assert edit_of(revert_change.propose(context)).function == "monthly_spend"


def test_a_changed_keyword_argument_in_a_function_is_a_one_line_revert(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path,
        {TRAIN: CANDIDATE_TRAIN},
        base={TRAIN: BASE_TRAIN},
        hypothesis="training_config_change",
        hints=changed((TRAIN, "parameters")),
    )
    edit = edit_of(revert_change.propose(context))
    assert diff_lines(edit.unified_diff) == ["-        l2=5.0,", "+        l2=0.01,"]


def test_a_changed_module_constant_is_a_one_line_revert(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path,
        {TRAIN: CANDIDATE_TRAIN},
        base={TRAIN: BASE_TRAIN},
        hypothesis="training_config_change",
        hints=changed((TRAIN, "<module>"), (TRAIN, "parameters")),
    )
    edit = edit_of(revert_change.propose(context))
    assert diff_lines(edit.unified_diff) == [
        "-LEARNING_RATE = 0.9",
        "+LEARNING_RATE = 0.1",
        "-        l2=5.0,",
        "+        l2=0.01,",
    ]
    module = load_module(git_applied(tmp_path, {TRAIN: CANDIDATE_TRAIN}, edit.unified_diff) / TRAIN)
    assert module.parameters(7) == load_module(tmp_path / "base" / TRAIN).parameters(7)
    assert edit.function is None


def test_a_changed_configuration_file_gets_its_base_hunks_back(tmp_path: Path) -> None:
    config = "pkg/training.yaml"
    base = "# training\nmodel:\n  C: 0.5\n  class_weight: balanced\nthreshold: 0.5\n"
    candidate = "# training\nmodel:\n  C: 0.5\n  class_weight: null  # calibrated\nthreshold: 0.5\n"
    context = repair_context(
        tmp_path,
        {config: candidate},
        base={config: base},
        hypothesis="training_config_change",
        hints=changed((config, "<module>")),
    )
    edit = edit_of(revert_change.propose(context))
    assert diff_lines(edit.unified_diff) == ["-  class_weight: null  # calibrated", "+  class_weight: balanced"]
    assert (git_applied(tmp_path, {config: candidate}, edit.unified_diff) / config).read_text() == base


def test_a_changed_signature_restores_the_whole_function(tmp_path: Path) -> None:
    base = "def rate(total, months):\n    return total / months\n"
    candidate = "def rate(total, months, scale=2):\n    return scale * total / months\n"
    context = repair_context(tmp_path, {FEATURES: candidate}, base={FEATURES: base}, hints=changed((FEATURES, "rate")))
    assert edit_of(revert_change.propose(context)).edits[0].new_text == base


def test_statements_the_candidate_added_or_removed_are_removed_or_restored(tmp_path: Path) -> None:
    base = "def clean(rows):\n    rows = [r for r in rows if r]\n    return sorted(rows)\n"
    candidate = "def clean(rows):\n    # keep order\n    return rows\n"
    context = repair_context(tmp_path, {FEATURES: candidate}, base={FEATURES: base}, hints=changed((FEATURES, "clean")))
    new_text = edit_of(revert_change.propose(context)).edits[0].new_text
    assert (
        new_text == "def clean(rows):\n    # keep order\n    rows = [r for r in rows if r]\n    return sorted(rows)\n"
    )


def test_refuses_a_function_that_is_not_in_the_base_revision(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path,
        {FEATURES: CANDIDATE_FEATURES + "\n\ndef new(x):\n    return x\n"},
        base={FEATURES: BASE_FEATURES},
        hints=changed((FEATURES, "new")),
    )
    assert "new does not exist in the base revision" in refusal_of(revert_change.propose(context))


def test_refuses_a_file_that_is_not_in_the_base_revision(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path, {FEATURES: CANDIDATE_FEATURES}, base={}, hints=changed((FEATURES, "monthly_spend"))
    )
    assert "does not exist in the base revision" in refusal_of(revert_change.propose(context))


def test_refuses_when_nothing_differs(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path, {FEATURES: CANDIDATE_FEATURES}, base={FEATURES: BASE_FEATURES}, hints=changed((FEATURES, "untouched"))
    )
    assert "is the same in the base and candidate" in refusal_of(revert_change.propose(context))


def test_refuses_a_revert_larger_than_the_policy_allows(tmp_path: Path) -> None:
    context = repair_context(
        tmp_path,
        {FEATURES: CANDIDATE_FEATURES},
        base={FEATURES: BASE_FEATURES},
        hints=changed((FEATURES, "monthly_spend")),
        max_changed_lines=2,
    )
    assert "would change 3 lines, more than the policy's 2" in refusal_of(revert_change.propose(context))


def test_refuses_statements_that_share_a_line(tmp_path: Path) -> None:
    base = "def f(x):\n    y = x; return y\n"
    candidate = "def f(x):\n    y = -x; return y\n"
    context = repair_context(tmp_path, {FEATURES: candidate}, base={FEATURES: base}, hints=changed((FEATURES, "f")))
    assert "shares its lines" in refusal_of(revert_change.propose(context))
