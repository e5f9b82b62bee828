"""The diagnosis benchmark's figures, computed from per-bundle results against expected.json."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from contracts.catalogue import Hypothesis, RepairStrategy
from modelguard.bench_diagnosis import BundleResult, bundle_line, hypothesis_named, score
from modelguard.cli import main


def _result(
    name: str, expected: tuple[str, str | None], got: tuple[str, str | None], ranked: list[str]
) -> BundleResult:
    repaired = got[0] in ("repair_validated", "validation_failed")
    return BundleResult(
        bundle=name,
        expected_outcome=expected[0],
        expected_hypothesis=hypothesis_named(expected[1]),
        outcome=got[0],
        hypothesis=hypothesis_named(got[1]),
        ranked=[Hypothesis(item) for item in ranked],
        exit_code=0,
        exit_code_matches=True,
        repair_strategy=RepairStrategy.REVERT_CHANGE if repaired else None,
        repair_lines=3 if repaired else None,
        seconds=1.0,
        validation_seconds=0.5 if repaired else None,
    )


def test_accuracy_and_abstention_figures_follow_the_results() -> None:
    ft, tc, ls, cd = "feature_transformation", "training_config_change", "label_shift", "covariate_drift"
    results = [
        _result("right", ("repair_validated", ft), ("repair_validated", ft), [ft, ls]),
        _result("second", ("no_code_repair", ls), ("no_code_repair", cd), [cd, ls]),
        _result("abstain-ok", ("abstained", None), ("abstained", None), [cd]),
        _result("abstain-wrong", ("no_code_repair", cd), ("abstained", None), [cd]),
        _result("failed", ("repair_validated", tc), ("validation_failed", tc), [tc]),
    ]
    figures = score(results)
    assert figures["top1_accuracy"] == 0.5  # right and failed of the four with a cause
    assert figures["top3_accuracy"] == 1.0  # the runner-up counts, and so does an abstention's ranking
    assert figures["outcome_accuracy"] == 0.6
    assert figures["abstention_precision"] == 0.5 and figures["abstention_recall"] == 1.0
    assert figures["repairs_proposed"] == 2 and figures["repairs_validated"] == 1 and figures["repairs_withheld"] == 1
    assert figures["lines_per_repair"] == [3, 3]


def test_a_validated_repair_larger_than_ten_lines_or_half_again_the_reviewers_fix_is_named() -> None:
    ft = "feature_transformation"
    base = _result("x", ("repair_validated", ft), ("repair_validated", ft), [ft])
    results = [
        replace(base, bundle="small", repair_lines=3, reference_fix_lines=2),
        replace(base, bundle="twice-the-reviewer", repair_lines=4, reference_fix_lines=2),
        replace(base, bundle="eleven", repair_lines=11, reference_fix_lines=28),
        replace(base, bundle="no-reference", repair_lines=10),
        replace(base, bundle="failed", outcome="validation_failed", repair_lines=40, reference_fix_lines=2),
    ]
    assert score(results)["oversized_repairs"] == ["twice-the-reviewer", "eleven"]


def test_an_outcome_that_should_tell_someone_and_names_no_owner_is_listed() -> None:
    base = _result("x", ("no_code_repair", "covariate_drift"), ("no_code_repair", "covariate_drift"), [])
    results = [
        replace(base, bundle="told", owners=2),
        replace(base, bundle="silent"),
        replace(base, bundle="abstained-silent", outcome="abstained"),
        replace(base, bundle="passed", outcome="gate_passed"),
    ]
    assert score(results)["naming_no_owner"] == ["silent", "abstained-silent"]


def test_a_validated_repair_that_changes_a_file_the_reviewers_fix_does_not_is_named() -> None:
    ft = "feature_transformation"
    base = _result("x", ("repair_validated", ft), ("repair_validated", ft), [ft])
    results = [
        replace(base, bundle="same-file", repair_files=("pkg/features.py",), reference_fix_files=("pkg/features.py",)),
        replace(
            base,
            bundle="also-the-caller",
            repair_files=("pkg/features.py", "pkg/pipeline.py"),
            reference_fix_files=("pkg/features.py",),
        ),
        replace(base, bundle="no-reference", repair_files=("pkg/anything.py",)),
        replace(
            base,
            bundle="withheld",
            outcome="repair_withheld",
            repair_files=("pkg/pipeline.py",),
            reference_fix_files=("pkg/features.py",),
        ),
    ]
    assert score(results)["repairs_outside_the_cause"] == ["also-the-caller"]


def test_a_bundles_line_names_the_hypotheses_and_the_strategy_plainly() -> None:
    ft = "feature_transformation"
    line = bundle_line(_result("churn", ("repair_validated", ft), ("repair_validated", ft), [ft]))
    assert (
        "expected repair_validated/feature_transformation  got repair_validated/feature_transformation "
        "repair revert_change (3 lines" in line
    )
    assert "Hypothesis." not in line and "RepairStrategy." not in line


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ('{"outcome": "repair_validated", "hypothesis": "gremlins"}', "hypothesis 'gremlins' is not in the catalogue"),
        ('{"repair_strategy": "rewrite_everything"}', "repair_strategy 'rewrite_everything' is not in the catalogue"),
        ('{"outcome": ', "not readable JSON"),
        ('["repair_validated"]', "the expected outcome is a JSON object"),
    ],
)
def test_a_bad_expected_file_is_one_line_before_any_bundle_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, said: str
) -> None:
    bundle = tmp_path / "suite" / "a-bundle"
    bundle.mkdir(parents=True)
    (bundle / "bundle.yaml").write_text("name: a-bundle\n")  # never loaded: the bench stops first
    (bundle / "expected.json").write_text(written)
    assert main(["bench", "diagnosis", str(tmp_path / "suite")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and "Traceback" not in err
