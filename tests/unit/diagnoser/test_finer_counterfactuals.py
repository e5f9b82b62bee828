"""The finer counterfactuals on a small real repository (tests/support/toy_repository.py): every figure comes
from running its predict command in the sandbox. One cause is injected per test; the diagnosis must find it by
measurement: which part of the change carries the drop, which repair of the incident data wins it back."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.diagnosis import diagnose_inputs
from services.diagnoser.evidence import EvidenceKind
from services.diagnoser.markdown_report import render_markdown
from tests.support import toy_repository as toy

THRESHOLDS = central_diagnosis_policy()


def _evidence(outcome, kind: EvidenceKind) -> dict:
    return next(item for item in outcome.evidence if item.kind == kind).values


def test_delta_debugging_keeps_the_change_that_carries_the_drop_and_drops_a_version_bump(tmp_path: Path) -> None:
    candidate = {"calc": toy.UNGUARDED, "version": "1.1.0", "train": "C = 1.0  # tuned in 2025-03\n"}
    case = toy.toy_inputs(tmp_path, candidate=candidate)
    outcome = diagnose_inputs(case, THRESHOLDS)
    assert (outcome.decision, outcome.chosen_hypothesis) == ("diagnosed", "feature_transformation")
    isolation = _evidence(outcome, EvidenceKind.CHANGE_ISOLATION)
    assert isolation["minimal_paths"] == ["toy/calc.py"] and isolation["proven"]
    assert set(isolation["dropped_paths"]) == {"pyproject.toml", "toy/train.py"}
    assert isolation["carried"] >= THRESHOLDS.carry_share
    assert all(s["verdict"] in ("reproduces", "does_not") for s in isolation["subsets"])
    config = _evidence(outcome, EvidenceKind.CONFIG_CHANGE)
    assert config["count"] == 0  # the bump and the comment carry nothing, by measurement
    assert [hint.path for hint in outcome.repair_hints.isolated_changes] == ["toy/calc.py"]
    assert "## Change isolation" in render_markdown(outcome)


def test_a_training_parameter_is_isolated_from_a_harmless_edit_of_the_feature_code(tmp_path: Path) -> None:
    candidate = {"calc": toy.DOCUMENTED, "train": "C = 0.00001\n"}
    outcome = diagnose_inputs(toy.toy_inputs(tmp_path, candidate=candidate), THRESHOLDS)
    assert outcome.chosen_hypothesis == "training_config_change"
    assert _evidence(outcome, EvidenceKind.CHANGE_ISOLATION)["minimal_paths"] == ["toy/train.py"]
    ranked = {h.name: h.score for h in outcome.hypotheses}
    assert ranked["training_config_change"] - ranked["feature_transformation"] >= THRESHOLDS.min_margin


def test_a_part_of_the_change_that_does_not_import_is_unresolved_never_evidence(tmp_path: Path) -> None:
    helper = toy.UNGUARDED.replace(
        "import numpy as np\n", "from toy.ratio import ratio as _ratio\nimport numpy as np\n"
    )
    case = toy.toy_inputs(tmp_path, candidate={"calc": helper})
    (Path(case.candidate_dir) / "toy" / "ratio.py").write_text("def ratio(a, b):\n    return a / b\n")
    outcome = diagnose_inputs(case, THRESHOLDS)
    isolation = _evidence(outcome, EvidenceKind.CHANGE_ISOLATION)
    verdicts = {tuple(s["units"]): s["verdict"] for s in isolation["subsets"]}
    assert "unresolved" in verdicts.values()  # calc.py without the new module does not import
    assert set(isolation["minimal_paths"]) == {"toy/calc.py", "toy/ratio.py"}
    assert outcome.chosen_hypothesis == "feature_transformation"


def test_the_budget_bounds_the_runs_and_says_so(tmp_path: Path) -> None:
    case = toy.toy_inputs(tmp_path, candidate={"calc": toy.UNGUARDED, "version": "2.0.0", "train": "C = 1.0\n# x\n"})
    case.trials.budget = 5  # the four counterfactual runs and one more
    outcome = diagnose_inputs(case, THRESHOLDS)
    isolation = _evidence(outcome, EvidenceKind.CHANGE_ISOLATION)
    assert case.trials.evaluations == 5 and not isolation["proven"]
    assert any(run.failure and "budget" in run.failure for run in outcome.runs)


@pytest.mark.parametrize(
    ("incident", "hypothesis", "kind"),
    [
        (lambda: (toy.customers(21), toy.customers(22)), None, None),
        (
            lambda: tuple(toy.customers(s).rename(columns={"visits": "visit_count"}) for s in (21, 22)),
            "upstream_schema_change",
            "schema",
        ),
        (lambda: tuple(toy.as_text_amounts(toy.customers(s)) for s in (21, 22)), "type_conversion", "type"),
        (
            lambda: (toy.customers(21), toy.customers(22).replace({"plan": {"pro": "professional"}})),
            "category_mapping",
            "category",
        ),
        (
            lambda: tuple(toy.with_nulls(toy.customers(s), "visits", 0.6) for s in (21, 22)),
            "source_data_quality",
            "quality",
        ),
        (lambda: (toy.customers(21), toy.customers(22, heavy_users=0.3)), "covariate_drift", "drift"),
        (lambda: tuple(toy.customers(s, positive_rate=0.08) for s in (21, 22)), "label_shift", "label"),
    ],
    ids=["no-fault", "rename", "text-numbers", "unseen-category", "nulls", "new-segment", "prior-shift"],
)
def test_the_intervention_that_wins_the_loss_back_names_the_data_cause(
    tmp_path: Path, incident, hypothesis, kind
) -> None:
    outcome = diagnose_inputs(toy.toy_inputs(tmp_path, incident=incident()), THRESHOLDS)
    if hypothesis is None:
        assert outcome.decision == "abstained" and outcome.abstention_code == "no_regression"
        return
    assert (outcome.decision, outcome.chosen_hypothesis, outcome.cause_location) == ("diagnosed", hypothesis, "data")
    interventions = _evidence(outcome, EvidenceKind.DATA_INTERVENTIONS)
    assert interventions["best"]["kind"] == kind
    assert interventions["recovered"][kind] == max(interventions["recovered"].values()) > 0.4
    assert "## Data interventions" in render_markdown(outcome)


def test_a_prior_shift_is_label_shift_even_though_the_inputs_moved_with_it(tmp_path: Path) -> None:
    rows = tuple(toy.customers(seed, positive_rate=0.08) for seed in (21, 22))
    outcome = diagnose_inputs(toy.toy_inputs(tmp_path, incident=rows), THRESHOLDS)
    assert outcome.chosen_hypothesis == "label_shift"
    quality = _evidence(outcome, EvidenceKind.SOURCE_QUALITY)
    assert quality["faulty_columns"] == []  # the flags' shares moved with the label mix: no invalid value
    residual = _evidence(outcome, EvidenceKind.DATA_INTERVENTIONS)["residual_drift"]
    assert residual["ks"] < THRESHOLDS.ks_drift  # P(inputs | label) as it was


def test_inputs_that_moved_within_each_label_group_are_no_prior_shift(tmp_path: Path) -> None:
    """A new segment of heavy users churns more, so the label mix moves too; within each class the visits moved
    as well, which a prior shift cannot do: covariate drift, not label shift."""
    outcome = diagnose_inputs(
        toy.toy_inputs(tmp_path, incident=(toy.customers(21), toy.customers(22, heavy_users=0.3))), THRESHOLDS
    )
    assert outcome.chosen_hypothesis == "covariate_drift"
    interventions = _evidence(outcome, EvidenceKind.DATA_INTERVENTIONS)
    assert interventions["label_moved"] >= THRESHOLDS.label_shift  # so the label mix was restored and tried
    assert interventions["residual_drift"]["ks"] >= THRESHOLDS.ks_drift


def test_the_outcome_does_not_depend_on_a_features_command(tmp_path: Path) -> None:
    for name, workspace in (("with", toy.CONFIG), ("without", toy.NO_FEATURES_COMMAND)):
        outcome = diagnose_inputs(
            toy.toy_inputs(tmp_path / name, candidate={"calc": toy.UNGUARDED}, workspace=workspace), THRESHOLDS
        )
        assert outcome.chosen_hypothesis == "feature_transformation", name
        top = outcome.hypotheses[0]
        assert top.measured_share == (1.0 if name == "with" else pytest.approx(0.85))
    assert "could be measured" in render_markdown(outcome)


def test_generated_feature_code_is_recognised_and_carried_to_the_repairer(tmp_path: Path) -> None:
    generated = "# Code generated by featuregen 2.4.0 from features.yaml. DO NOT EDIT.\n" + toy.UNGUARDED
    outcome = diagnose_inputs(toy.toy_inputs(tmp_path, candidate={"calc": generated}), THRESHOLDS)
    assert outcome.chosen_hypothesis == "feature_transformation"
    [found] = outcome.repair_hints.generated_files
    assert found.path == "toy/calc.py" and found.generator == "featuregen 2.4.0"


def test_identical_trees_on_the_same_window_are_evaluated_once(tmp_path: Path) -> None:
    rows = tuple(toy.customers(seed).rename(columns={"visits": "visit_count"}) for seed in (21, 22))
    case = toy.toy_inputs(tmp_path, incident=rows)  # the candidate is the base: two pairs are cache hits
    outcome = diagnose_inputs(case, THRESHOLDS)
    assert sum(run.cached for run in outcome.runs) >= 2
    assert case.trials.evaluations == len([run for run in outcome.runs if not run.cached and run.metric is not None])
