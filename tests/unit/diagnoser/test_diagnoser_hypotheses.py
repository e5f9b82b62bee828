"""Hypotheses are ranked from evidence; the decision names a cause only when it is strong and clearly ahead."""

from __future__ import annotations

from pathlib import Path

from services.diagnoser.code_diff import diff_trees
from services.diagnoser.code_evidence import code_change_evidence
from services.diagnoser.decision import Abstention, Diagnosis, diagnose
from services.diagnoser.evidence import Evidence, EvidenceKind, of_kind
from services.diagnoser.hypotheses import (
    FEATURE_TRANSFORMATION,
    SOURCE_DATA_QUALITY,
    TRAINING_CONFIGURATION,
    WEIGHTS,
    rank_hypotheses,
)
from services.diagnoser.workspace_evidence import (
    FeatureRun,
    MetricComparison,
    SourceAnomalyCount,
    invalid_values_evidence,
    metric_delta_evidence,
    source_anomaly_evidence,
    source_identity_evidence,
)

GUARDED = "def monthly(total, months):\n    if months <= 0:\n        return 0.0\n    return total / months\n"
UNGUARDED = "def monthly(total, months):\n    return total / months\n"
TRAIN = "C = 1.0\n\n\ndef fit():\n    return C\n"
RETUNED_TRAIN = "C = 0.01\n\n\ndef fit():\n    return C\n"
FEATURE_FILES = frozenset({"pkg/features.py"})
POLICY = {"abstain_below": 0.6, "min_margin": 0.15}
CANDIDATE_DATA = "c" * 64
OTHER_DATA = "b" * 64


def code_evidence(tmp_path: Path, features: str = GUARDED, train: str = TRAIN) -> list[Evidence]:
    trees = {"base": {"pkg/features.py": GUARDED, "pkg/train.py": TRAIN}}
    trees["candidate"] = {"pkg/features.py": features, "pkg/train.py": train}
    for name, files in trees.items():
        for relpath, text in files.items():
            path = tmp_path / name / relpath
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    base, candidate = tmp_path / "base", tmp_path / "candidate"
    return code_change_evidence(diff_trees(base, candidate), base, candidate, FEATURE_FILES)


def run_evidence(
    *,
    base_invalid: int,
    candidate_invalid: int,
    same_data: bool = True,
    anomalies: tuple[int, int] = (5, 5),
    regressed: bool = True,
) -> list[Evidence]:
    def run(tree: str, invalid: int) -> FeatureRun:
        by_column = {"monthly_spend": invalid} if invalid else {}
        return FeatureRun(
            tree=tree, data_digest=CANDIDATE_DATA, invalid_total=invalid, invalid_by_column=by_column, invalid_rows=100
        )

    base_data = CANDIDATE_DATA if same_data else OTHER_DATA
    metric = MetricComparison(
        metric="f1",
        direction="higher_is_better",
        tolerance=0.02,
        base=0.8,
        candidate=0.7 if regressed else 0.8,
        measured_by="test",
    )
    return [
        invalid_values_evidence(run("base", base_invalid), run("candidate", candidate_invalid)),
        source_identity_evidence(base_data, CANDIDATE_DATA),
        source_anomaly_evidence(
            SourceAnomalyCount(
                column="months",
                selected_by="divisor_parameter",
                base_data_count=anomalies[0],
                candidate_data_count=anomalies[1],
            )
        ),
        metric_delta_evidence(metric),
    ]


def scores(evidence: list[Evidence]) -> dict[str, float]:
    return {hypothesis.name: hypothesis.score for hypothesis in rank_hypotheses(evidence)}


def test_every_hypothesis_support_weights_add_up_to_one() -> None:
    for hypothesis in WEIGHTS:
        assert round(sum(hypothesis.support.values()), 6) == 1.0, hypothesis.name


def test_changed_feature_function_that_creates_invalid_values_ranks_feature_transformation_first(
    tmp_path: Path,
) -> None:
    evidence = code_evidence(tmp_path, features=UNGUARDED) + run_evidence(base_invalid=0, candidate_invalid=12)
    ranked = rank_hypotheses(evidence)
    assert ranked[0].name == FEATURE_TRANSFORMATION
    top = ranked[0]
    assert top.score > ranked[1].score
    assert top.confidence_level == "high"
    invalid = of_kind(evidence, EvidenceKind.INVALID_FEATURE_VALUES)[0]
    division = of_kind(evidence, EvidenceKind.UNGUARDED_DIVISION)[0]
    assert {invalid.id, division.id} <= set(top.supporting_evidence_ids)
    assert top.counter_evidence_ids == ()


def test_unchanged_source_rows_count_against_source_data_quality(tmp_path: Path) -> None:
    evidence = code_evidence(tmp_path, features=UNGUARDED) + run_evidence(base_invalid=0, candidate_invalid=12)
    source = next(hypothesis for hypothesis in rank_hypotheses(evidence) if hypothesis.name == SOURCE_DATA_QUALITY)
    identity = of_kind(evidence, EvidenceKind.SOURCE_DATA_IDENTITY)[0]
    anomalies = of_kind(evidence, EvidenceKind.SOURCE_ANOMALIES)[0]
    assert identity.id in source.counter_evidence_ids
    assert anomalies.id in source.supporting_evidence_ids
    assert source.score < 0.5


def test_degraded_source_data_with_unchanged_code_ranks_source_data_quality_first(tmp_path: Path) -> None:
    evidence = code_evidence(tmp_path) + run_evidence(
        base_invalid=40, candidate_invalid=40, same_data=False, anomalies=(5, 40)
    )
    ranked = rank_hypotheses(evidence)
    assert ranked[0].name == SOURCE_DATA_QUALITY
    assert isinstance(diagnose(evidence, POLICY), Diagnosis)


def test_retuned_training_code_without_invalid_values_ranks_training_configuration_first(tmp_path: Path) -> None:
    evidence = code_evidence(tmp_path, train=RETUNED_TRAIN) + run_evidence(base_invalid=0, candidate_invalid=0)
    ranked = rank_hypotheses(evidence)
    assert ranked[0].name == TRAINING_CONFIGURATION
    assert scores(evidence)[FEATURE_TRANSFORMATION] == 0.0


def test_evidence_ids_are_stable_and_follow_the_values(tmp_path: Path) -> None:
    first = run_evidence(base_invalid=0, candidate_invalid=12)
    again = run_evidence(base_invalid=0, candidate_invalid=12)
    other = run_evidence(base_invalid=0, candidate_invalid=13)
    assert [item.id for item in first] == [item.id for item in again]
    assert first[0].id != other[0].id


def test_diagnosis_names_the_leader_when_it_is_strong_and_clear(tmp_path: Path) -> None:
    evidence = code_evidence(tmp_path, features=UNGUARDED) + run_evidence(base_invalid=0, candidate_invalid=12)
    decision = diagnose(evidence, POLICY)
    assert isinstance(decision, Diagnosis)
    assert decision.hypothesis == FEATURE_TRANSFORMATION
    assert decision.margin >= POLICY["min_margin"]


def test_abstains_when_two_causes_are_close(tmp_path: Path) -> None:
    # The data degraded and the feature code changed: both explain part of the damage.
    evidence = code_evidence(tmp_path, features=UNGUARDED) + run_evidence(
        base_invalid=20, candidate_invalid=40, same_data=False, anomalies=(5, 40)
    )
    ranked = rank_hypotheses(evidence)
    gap = ranked[0].score - ranked[1].score
    policy = {"abstain_below": 0.5, "min_margin": round(gap + 0.05, 4)}
    decision = diagnose(evidence, policy)
    assert isinstance(decision, Abstention)
    assert decision.reason_code == "insufficient_margin"
    assert {ranked[0].name, ranked[1].name} == {SOURCE_DATA_QUALITY, FEATURE_TRANSFORMATION}
    assert ranked[0].name in decision.reason and ranked[1].name in decision.reason


def test_abstains_when_the_evidence_is_weak(tmp_path: Path) -> None:
    # The metric fell but nothing changed that could explain it.
    evidence = code_evidence(tmp_path) + run_evidence(base_invalid=0, candidate_invalid=0)
    decision = diagnose(evidence, POLICY)
    assert isinstance(decision, Abstention)
    assert decision.reason_code == "below_threshold"
    assert decision.top_score is not None and decision.top_score < POLICY["abstain_below"]


def test_no_regression_counts_against_every_hypothesis(tmp_path: Path) -> None:
    evidence = code_evidence(tmp_path, features=UNGUARDED) + run_evidence(
        base_invalid=0, candidate_invalid=12, regressed=False
    )
    regressed = code_evidence(tmp_path / "again", features=UNGUARDED) + run_evidence(
        base_invalid=0, candidate_invalid=12
    )
    assert scores(evidence)[FEATURE_TRANSFORMATION] < scores(regressed)[FEATURE_TRANSFORMATION]
