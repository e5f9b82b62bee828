"""Who a repair outcome tells: for a cause in the data (named, or every candidate of an abstention) the owners
of the datasets it lies in first, then the model's; for a code cause the model's; and an asset DataHub records no
owner for stays on the list, empty, so the publication can say so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contracts.common import AssetOwners
from contracts.events.diagnosis import (
    ContextSummary,
    DiagnosisAbstained,
    DiagnosisCompleted,
    DiagnosisReport,
    RankedHypothesis,
)
from services.repairer.events import withheld_after_abstention
from services.repairer.handler import RepairWithholding, propose_repair
from services.repairer.outcome_owners import abstention_candidates, owners_to_tell, urns_to_notify
from tests.support.sample_diagnosis import diagnosis_completed
from tests.support.sample_owners import owned
from tests.support.typed_policy import repair_section, workspace_policy
from tests.unit.publisher.publisher_inputs import _common
from tests.unit.repairer.strategies.patched_trees import write_tree

MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn,PROD)"
RAW = "urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.customers,PROD)"
FEATURES = "urn:li:dataset:(urn:li:dataPlatform:snowflake,ml.churn_features,PROD)"
CRM_TEAM = "urn:li:corpGroup:crm-data"
DANA = "urn:li:corpuser:dana"
ANA = "urn:li:corpuser:ana"


def summary(cause_datasets: list[str], *, model_owned: bool = True, raw_owned: bool = True) -> ContextSummary:
    model = owned(MODEL, (ANA, "TECHNICAL_OWNER")) if model_owned else owned(MODEL)
    raw = owned(RAW, (CRM_TEAM, "DATAOWNER"), (DANA, "TECHNICAL_OWNER")) if raw_owned else owned(RAW)
    return ContextSummary(
        model_owners=[ANA] if model_owned else [],
        upstream_datasets=[RAW],
        model_ownership=model,
        dataset_ownership=[raw, owned(FEATURES, (ANA, "TECHNICAL_OWNER"))],
        cause_datasets=cause_datasets,
    )


def test_a_data_cause_tells_the_owners_of_its_upstream_dataset_first_then_the_models() -> None:
    told = owners_to_tell(summary([RAW]), ["source_data_quality"])
    assert [entry.asset for entry in told] == [RAW, MODEL]
    assert [(o.owner_urn, o.type) for o in told[0].owners] == [(CRM_TEAM, "DATAOWNER"), (DANA, "TECHNICAL_OWNER")]
    assert urns_to_notify(summary([RAW]), told) == [CRM_TEAM, DANA, ANA]


def test_a_code_cause_tells_the_models_owners() -> None:
    for hypothesis in ("feature_transformation", "training_config_change"):
        assert owners_to_tell(summary([RAW]), [hypothesis]) == [owned(MODEL, (ANA, "TECHNICAL_OWNER"))]


def test_no_owner_known_keeps_each_asset_with_an_empty_list() -> None:
    bare = summary([RAW, "urn:li:dataset:(urn:li:dataPlatform:s3,landing.customers,PROD)"], model_owned=False)
    bare = bare.model_copy(update={"dataset_ownership": [owned(RAW)]})
    told = owners_to_tell(bare, ["covariate_drift"])
    assert [entry.asset for entry in told] == [*bare.cause_datasets, MODEL]
    assert all(entry.owners == [] for entry in told)
    assert urns_to_notify(bare, told) == []


def test_a_report_from_before_1_1_names_no_asset_and_keeps_its_flat_owners() -> None:
    legacy = ContextSummary(model_owners=[ANA], upstream_owners=[DANA, ANA])
    assert owners_to_tell(legacy, ["label_shift"]) == []
    assert urns_to_notify(legacy, []) == [ANA, DANA]


def ranked(name: str, score: float, confidence: str) -> RankedHypothesis:
    return RankedHypothesis(name=name, score=score, confidence=confidence, supporting=[], counter=[], explanation="")


def report(hypotheses: list[RankedHypothesis]) -> DiagnosisReport:
    return DiagnosisReport(
        evidence=[],
        hypotheses=hypotheses,
        invalid_values={},
        suspect=None,
        context_digest="0" * 64,
        context_summary=summary([RAW]),
    )


def abstained(hypotheses: list[RankedHypothesis]) -> DiagnosisAbstained:
    common: dict[str, Any] = {k: v for k, v in _common("run-1").items() if k != "diagnosis"}
    return DiagnosisAbstained(**common, report=report(hypotheses), reason="insufficient margin")


def test_an_abstention_among_data_causes_tells_the_datas_owners_first() -> None:
    among_data = [
        ranked("covariate_drift", 0.62, "medium"),
        ranked("label_shift", 0.55, "medium"),
        ranked("feature_transformation", 0.2, "low"),
        ranked("unknown", 0.1, "low"),
    ]
    assert abstention_candidates(report(among_data)) == ["covariate_drift", "label_shift"]
    event = withheld_after_abstention(abstained(among_data))
    assert (event.hypothesis, event.reason_code) == (None, "diagnosis_abstained")
    assert [entry.asset for entry in event.owners] == [RAW, MODEL]
    assert event.owners_to_notify == [CRM_TEAM, DANA, ANA]


def test_an_abstention_with_a_code_candidate_or_none_tells_the_models_owners() -> None:
    both_sides = [ranked("covariate_drift", 0.6, "medium"), ranked("feature_transformation", 0.52, "medium")]
    nothing = [ranked("unknown", 0.7, "medium"), ranked("covariate_drift", 0.3, "low")]
    for hypotheses in (both_sides, nothing):
        assert [entry.asset for entry in withheld_after_abstention(abstained(hypotheses)).owners] == [MODEL]


POLICY = repair_section({"strategies": ["column_rename", "null_guard"], "allowed_paths": ["pkg/*.py"]})
SPEC = workspace_policy(evaluate=["python", "evaluate.py", "--data", "{data}"])


def completed(hypothesis: str, hints: dict[str, Any], context_summary: ContextSummary) -> DiagnosisCompleted:
    return diagnosis_completed(hypothesis, hints=hints, context_summary=context_summary)


def test_every_withholding_of_a_data_cause_carries_the_owners_and_the_reason_names_them(tmp_path: Path) -> None:
    root = write_tree(tmp_path / "candidate", {"pkg/loader.py": "def load(frame):\n    return frame['tenure']\n"})
    no_fill = propose_repair(
        completed("source_data_quality", {"null_columns": ["tenure"]}, summary([RAW])), root, POLICY, SPEC
    )
    assert isinstance(no_fill, RepairWithholding) and no_fill.reason_code == "cause_in_data"
    assert [entry.asset for entry in no_fill.owners] == [RAW, MODEL]
    assert f"notify {CRM_TEAM}, {DANA}, {ANA}" in no_fill.reason
    refused = propose_repair(completed("upstream_schema_change", {}, summary([RAW])), root, POLICY, SPEC)
    assert isinstance(refused, RepairWithholding) and refused.reason_code != "cause_in_data"
    assert refused.owner_urns == (CRM_TEAM, DANA, ANA)
    nobody = summary([RAW], model_owned=False, raw_owned=False)
    unowned = propose_repair(completed("covariate_drift", {}, nobody), root, POLICY, SPEC)
    assert isinstance(unowned, RepairWithholding) and unowned.owners == (
        AssetOwners(asset=RAW),
        AssetOwners(asset=MODEL),
    )
    assert unowned.reason.endswith("; DataHub records no owner to notify")
