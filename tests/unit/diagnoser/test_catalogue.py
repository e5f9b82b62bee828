"""The catalogue: each hypothesis wins on its own facts (what was run carries most of the weight), falsification
tests knock rivals out, and the decision abstains on no regression, a mixed cause, nothing supported, a low
score or a small margin. Scores are calibrated: what could not be measured adds nothing and is never rescaled."""

from __future__ import annotations

import pytest

from contracts.catalogue import Hypothesis
from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.catalogue.decision import decide
from services.diagnoser.catalogue.facts import Fact, Facts, FactValue
from services.diagnoser.catalogue.hypotheses import CATALOGUE
from services.diagnoser.catalogue.scoring import rank_hypotheses

THRESHOLDS = central_diagnosis_policy()
CODE = {Fact.DROP_FOLLOWS_CODE: 1.0, Fact.DROP_FOLLOWS_DATA: 0.0}
DATA = {Fact.DROP_FOLLOWS_CODE: 0.0, Fact.DROP_FOLLOWS_DATA: 1.0}
CLEAN_DATA = {
    Fact.READ_COLUMNS_PRESENT: 1.0,
    Fact.TYPES_UNCHANGED: 1.0,
    Fact.CATEGORIES_KNOWN: 1.0,
    Fact.QUALITY_UNCHANGED: 1.0,
}


def facts(**strengths: float) -> Facts:
    return {Fact(name): FactValue(value, (f"ev-{name}",)) for name, value in strengths.items() if value > 0}


def of(*tables: dict[Fact, float]) -> Facts:
    merged: dict[str, float] = {}
    for table in tables:
        merged.update({fact.value: value for fact, value in table.items()})
    return facts(**merged)


CASES = {
    "feature_transformation": of(
        CODE,
        CLEAN_DATA,
        {
            Fact.CHANGE_IN_FEATURE_CODE: 1,
            Fact.FEATURE_CODE_CHANGED: 1,
            Fact.OTHER_CODE_UNCHANGED: 1,
            Fact.FEATURES_DIFFER: 1,
            Fact.INVALID_VALUES_INTRODUCED: 1,
            Fact.DIVISION_UNGUARDED: 1,
        },
    ),
    "training_config_change": of(
        CODE,
        CLEAN_DATA,
        {
            Fact.CHANGE_OUTSIDE_FEATURE_CODE: 1,
            Fact.FEATURE_CODE_UNCHANGED: 1,
            Fact.OTHER_CODE_CHANGED: 1,
            Fact.PARAMETERS_CHANGED: 1,
            Fact.FEATURES_IDENTICAL: 1,
        },
    ),
    "upstream_schema_change": of(
        DATA,
        {
            Fact.RECOVERED_BY_SCHEMA: 1,
            Fact.READ_COLUMN_GONE: 1,
            Fact.RENAME_FOUND: 1,
            Fact.SCHEMA_RENAMED_OR_REMOVED: 1,
            Fact.DATA_FAULT: 1,
            Fact.FEATURES_IDENTICAL: 1,
            Fact.TYPES_UNCHANGED: 1,
            Fact.QUALITY_UNCHANGED: 1,
        },
    ),
    "type_conversion": of(
        DATA,
        {
            Fact.RECOVERED_BY_TYPE: 0.9,
            Fact.NUMERIC_AS_TEXT: 1,
            Fact.DATA_FAULT: 1,
            Fact.READ_COLUMNS_PRESENT: 1,
            Fact.QUALITY_UNCHANGED: 1,
            Fact.CATEGORIES_KNOWN: 1,
        },
    ),
    "category_mapping": of(
        DATA,
        {
            Fact.RECOVERED_BY_CATEGORY: 0.8,
            Fact.UNSEEN_CATEGORIES: 1,
            Fact.DATA_FAULT: 1,
            Fact.READ_COLUMNS_PRESENT: 1,
            Fact.TYPES_UNCHANGED: 1,
            Fact.QUALITY_UNCHANGED: 1,
        },
    ),
    "source_data_quality": of(
        DATA,
        {
            Fact.RECOVERED_BY_QUALITY: 0.9,
            Fact.QUALITY_DEGRADED: 1,
            Fact.ASSERTION_FAILING: 1,
            Fact.DATA_FAULT: 1,
            Fact.READ_COLUMNS_PRESENT: 1,
            Fact.TYPES_UNCHANGED: 1,
            Fact.CATEGORIES_KNOWN: 1,
        },
    ),
    "covariate_drift": of(
        DATA,
        CLEAN_DATA,
        {Fact.NO_SPECIFIC_RECOVERY: 1, Fact.SOURCE_SHIFTED: 1, Fact.FEATURES_SHIFTED: 1, Fact.LABEL_STABLE: 1},
    ),
    "label_shift": of(
        DATA,
        CLEAN_DATA,
        # a prior shift moves the inputs too: the measured recovery decides, not "inputs unchanged"
        {Fact.RECOVERED_BY_LABEL: 0.9, Fact.LABEL_SHIFTED: 1, Fact.SOURCE_SHIFTED: 1, Fact.OUTDONE_DRIFT: 0.8},
    ),
}


def test_every_hypothesis_of_the_catalogue_is_scored_and_has_a_case_here() -> None:
    assert {spec.name for spec in CATALOGUE} | {Hypothesis.UNKNOWN} == {*CASES, Hypothesis.UNKNOWN}
    for spec in CATALOGUE:  # a score can never exceed 1: nothing is rescaled
        assert 0.9 - 1e-9 <= sum(spec.support.values()) <= 1.0 + 1e-9


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_hypothesis_is_named_on_its_own_facts(name: str) -> None:
    ranked = rank_hypotheses(CASES[name])
    decision = decide(ranked, CASES[name], THRESHOLDS)
    assert decision.decision == "diagnosed" and decision.hypothesis == name
    assert decision.score is not None and decision.score >= THRESHOLDS.abstain_below
    assert decision.cause_location == ranked[0].location


def test_base_code_producing_the_same_invalid_values_falsifies_the_transformation() -> None:
    case = dict(CASES["feature_transformation"])
    before = rank_hypotheses(case)[0].score
    case[Fact.INVALID_VALUES_UNDER_BASE] = FactValue(1.0, ("ev-base",))
    after = next(h for h in rank_hypotheses(case) if h.name == "feature_transformation")
    assert after.score == pytest.approx(before - 0.1)
    assert "ev-base" in after.counter_evidence_ids


def test_unchanged_source_rows_falsify_source_quality() -> None:
    case = of(DATA, {Fact.QUALITY_UNCHANGED: 1, Fact.ASSERTION_FAILING: 1})
    quality = next(h for h in rank_hypotheses(case) if h.name == "source_data_quality")
    assert quality.score == 0.0 and Fact.QUALITY_UNCHANGED in {c.fact for c in quality.counter}


def test_a_data_fault_that_wins_the_loss_back_falsifies_covariate_drift_and_label_shift() -> None:
    measured = facts(
        source_columns_shifted=1,
        another_intervention_recovers_more_than_quantile_mapping=0.8,
        another_intervention_recovers_more_than_the_label_mix=0.8,
    )
    ranked = {h.name: h.score for h in rank_hypotheses(CASES["category_mapping"] | measured)}
    assert ranked["covariate_drift"] < THRESHOLDS.abstain_below and ranked["label_shift"] == 0.0


def test_drop_following_the_data_falsifies_code_hypotheses() -> None:
    case = of(DATA, {Fact.FEATURE_CODE_CHANGED: 1, Fact.FEATURES_DIFFER: 1, Fact.DIVISION_UNGUARDED: 1})
    assert next(h for h in rank_hypotheses(case) if h.name == "feature_transformation").score == 0.0


def test_no_regression_abstains() -> None:
    case = facts(no_regression=1, feature_code_changed=1, features_differ_on_same_rows=1)
    decision = decide(rank_hypotheses(case), case, THRESHOLDS)
    assert decision.decision == "abstained" and decision.reason_code == "no_regression"


def test_a_mixed_cause_abstains() -> None:
    case = dict(CASES["feature_transformation"])
    case[Fact.DROP_FOLLOWS_CODE] = FactValue(0.5, ("ev-cf",))
    case[Fact.DROP_FOLLOWS_DATA] = FactValue(0.5, ("ev-cf",))
    decision = decide(rank_hypotheses(case), case, THRESHOLDS)
    assert decision.reason_code == "mixed_cause" and decision.cause_location == "mixed"


def test_nothing_supported_makes_unknown_win_and_abstain() -> None:
    case = of(DATA, CLEAN_DATA, {Fact.LABEL_STABLE: 1, Fact.SOURCE_STABLE: 1})
    ranked = rank_hypotheses(case)
    decision = decide(ranked, case, THRESHOLDS)
    assert ranked[0].name == Hypothesis.UNKNOWN and decision.reason_code == "nothing_supported"


def test_a_low_top_score_abstains() -> None:
    case = of(
        DATA,
        {
            Fact.UNSEEN_CATEGORIES: 0.3,
            Fact.READ_COLUMNS_PRESENT: 1,
            Fact.TYPES_UNCHANGED: 1,
            Fact.QUALITY_UNCHANGED: 1,
            Fact.DATA_FAULT: 0.3,
        },
    )
    decision = decide(rank_hypotheses(case), case, THRESHOLDS)
    assert decision.decision == "abstained" and decision.reason_code in ("below_threshold", "nothing_supported")


def test_two_close_hypotheses_abstain_on_the_margin() -> None:
    case = of(
        DATA,
        {
            Fact.UNSEEN_CATEGORIES: 1,
            Fact.QUALITY_DEGRADED: 1,
            Fact.DATA_FAULT: 1,
            Fact.READ_COLUMNS_PRESENT: 1,
            Fact.TYPES_UNCHANGED: 1,
        },
    )
    ranked = rank_hypotheses(case)
    decision = decide(ranked, case, THRESHOLDS)
    assert decision.reason_code == "insufficient_margin" and decision.margin is not None
    assert decision.margin < THRESHOLDS.min_margin
    top, runner_up = ranked[0], ranked[1]  # the reason names them plainly, never as an enum's repr
    assert decision.reason is not None
    assert decision.reason.startswith(
        f"top hypothesis {top.name.value} ({top.score:.2f}) leads {runner_up.name.value} ({runner_up.score:.2f}) by"
    )


def test_what_could_not_be_measured_adds_nothing_and_is_reported_not_rescaled() -> None:
    """Without a features command nothing says whether the features differ: the score is what was measured (no
    clamping to 1.0, no scaling up), the hypothesis reports which share of its support could be measured, and
    the rival code hypothesis is still falsified by where the isolated change is."""
    known = of(CODE, CLEAN_DATA, {Fact.CHANGE_IN_FEATURE_CODE: 1.0, Fact.FEATURE_CODE_CHANGED: 1.0})
    features = frozenset({Fact.FEATURES_DIFFER, Fact.FEATURES_IDENTICAL, Fact.INVALID_VALUES_INTRODUCED})
    measured = {h.name: h for h in rank_hypotheses(known)}
    unmeasured = {h.name: h for h in rank_hypotheses(known, unmeasured=features)}
    assert measured["feature_transformation"].score == unmeasured["feature_transformation"].score == 0.8
    assert measured["feature_transformation"].measured_share == 1.0
    assert unmeasured["feature_transformation"].measured_share == pytest.approx(0.85)
    assert unmeasured["training_config_change"].score == 0.0
    decision = decide(rank_hypotheses(known, unmeasured=features), known, THRESHOLDS)
    assert decision.hypothesis == "feature_transformation"


def test_two_code_hypotheses_never_tie_at_a_clamped_score() -> None:
    """The old failure: without a features command both code hypotheses were rescaled to 1.00 and tied."""
    case = of(
        CODE,
        CLEAN_DATA,
        {
            Fact.CHANGE_OUTSIDE_FEATURE_CODE: 1.0,
            Fact.FEATURE_CODE_CHANGED: 1.0,  # a docstring edit in a feature module beside the real change
            Fact.OTHER_CODE_CHANGED: 1.0,
            Fact.PARAMETERS_CHANGED: 1.0,
        },
    )
    ranked = {h.name: h.score for h in rank_hypotheses(case)}
    assert ranked["training_config_change"] - ranked["feature_transformation"] >= THRESHOLDS.min_margin


def test_an_intervention_that_wins_back_more_falsifies_a_rival_data_cause() -> None:
    case = of(
        DATA,
        {
            Fact.QUALITY_DEGRADED: 1,  # binary flags moved with the label mix
            Fact.RECOVERED_BY_LABEL: 0.9,
            Fact.LABEL_SHIFTED: 1,
            Fact.OUTDONE_QUALITY: 0.9,
            Fact.SOURCE_SHIFTED: 1,
            Fact.READ_COLUMNS_PRESENT: 1,
            Fact.TYPES_UNCHANGED: 1,
            Fact.CATEGORIES_KNOWN: 1,
        },
    )
    decision = decide(rank_hypotheses(case), case, THRESHOLDS)
    assert decision.hypothesis == "label_shift"
