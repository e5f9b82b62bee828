"""Signed publisher inputs for tests: real contracts, real keys, a real unified diff of a real file."""

from __future__ import annotations

import difflib
import hashlib
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

from contracts.common import AssetOwners, PolicyRef, owner_urns
from contracts.events.context import AffectedModel, UpstreamRiskDetected
from contracts.events.diagnosis import ContextSummary, DeploymentRef, DiagnosisReport, EvidenceItem, RankedHypothesis
from contracts.events.repair import PatchSummary, RepairWithheld
from contracts.events.validation import RepairValidated, ValidationCheck, ValidationFailed, ValidationReport
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from tests.support.sample_events import Keys, artifact, gate, workspace
from tests.support.sample_owners import owned

INCIDENT = "inc-0123456789abcdef"
AT = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
MODEL = workspace().model_urn
OWNERS = ["urn:li:corpuser:alice", "urn:li:corpGroup:ml-platform"]
DATA_TEAM = "urn:li:corpGroup:crm-data"
DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,churn-endpoint,PROD)"
UPSTREAM = "urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.public.customers,PROD)"
PRODUCERS = ("validator", "repairer", "context", "publisher")

FEATURES_BEFORE = """import pandas as pd


def monthly_spend(frame: pd.DataFrame) -> pd.Series:
    total = frame["total_spend"]
    months = frame["tenure_months"]
    return total / months


def tenure_years(frame: pd.DataFrame) -> pd.Series:
    return frame["tenure_months"] / 12
"""
FEATURES_AFTER = FEATURES_BEFORE.replace(
    '    months = frame["tenure_months"]\n',
    '    months = frame["tenure_months"]\n    months = months.where(months != 0)\n',
)


def features_diff(after: str = FEATURES_AFTER) -> str:
    path = "churn_model/features.py"
    lines = difflib.unified_diff(
        FEATURES_BEFORE.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(lines)


def model_ownership() -> AssetOwners:
    return owned(MODEL, *((who, "TECHNICAL_OWNER") for who in OWNERS))


def upstream_ownership() -> AssetOwners:
    return owned(UPSTREAM, (DATA_TEAM, "DATAOWNER"))


def summary(in_service: bool = True, upstream: bool = False) -> ContextSummary:
    return ContextSummary(
        model_owners=OWNERS,
        deployments=[DeploymentRef(urn=DEPLOYMENT, status="IN_SERVICE" if in_service else "OUT_OF_SERVICE")],
        upstream_datasets=[UPSTREAM] if upstream else [],
        upstream_owners=[DATA_TEAM] if upstream else [],
        provider="file",
        model_ownership=model_ownership(),
        dataset_ownership=[upstream_ownership()] if upstream else [],
        cause_datasets=[UPSTREAM] if upstream else [],
    )


def report(top: str = "feature_transformation", in_service: bool = True) -> DiagnosisReport:
    return DiagnosisReport(
        evidence=[
            EvidenceItem(
                evidence_id="ev-1",
                kind="invalid_values",
                summary="monthly_spend is infinite for 3 rows on the candidate",
                source="data",
            )
        ],
        hypotheses=[
            RankedHypothesis(
                name=top, score=0.8, confidence="high", supporting=["ev-1"], counter=[], explanation="division"
            ),
            RankedHypothesis(
                name="training_config_change", score=0.1, confidence="low", supporting=[], counter=[], explanation="-"
            ),
        ],
        invalid_values={"base": 0, "candidate": 3},
        suspect=None,
        context_digest="0" * 64,
        context_summary=summary(in_service, upstream=top == "source_data_quality"),
    )


def _common(run_id: str, top: str = "feature_transformation", in_service: bool = True) -> dict[str, object]:
    return {
        "run_id": run_id,
        "workspace": workspace(),
        "policy": PolicyRef(name="churn", artifact=artifact(b"policy")),
        "gate": gate(),
        "diagnosis": report(top, in_service),
    }


def patch(after: str = FEATURES_AFTER) -> PatchSummary:
    diff = features_diff(after)
    return PatchSummary(
        strategy="guarded_division",
        files=["churn_model/features.py"],
        added_lines=1,
        removed_lines=0,
        diff=diff,
        artifact=artifact(diff.encode(), "text/x-diff"),
    )


def validation(metric: float = 0.79) -> ValidationReport:
    return ValidationReport(
        checks=[ValidationCheck(name="tests", passed=True), ValidationCheck(name="evaluation", passed=True)],
        metric_after_repair=metric,
        invalid_values_after=0,
        tests_passed=12,
        tests_failed=0,
        source_unchanged=True,
    )


def withheld_payload(
    reason: str = "diagnosis abstained",
    run_id: str = "run-1",
    *,
    hypothesis: str | None = None,
    reason_code: str | None = None,
    owners: list[AssetOwners] | None = None,
) -> RepairWithheld:
    """Withheld after an abstention by default; with ``hypothesis``, withheld for that cause. ``owners`` as the
    repairer names them (default: the model's)."""
    told = [model_ownership()] if owners is None else owners
    return RepairWithheld(
        **_common(run_id, hypothesis or "feature_transformation"),  # type: ignore[arg-type]
        hypothesis=hypothesis,
        reason=reason,
        reason_code=reason_code,
        owners_to_notify=owner_urns(told),
        owners=told,
    )


def validated_payload(
    run_id: str = "run-1", metric: float = 0.79, top: str = "feature_transformation", in_service: bool = True
) -> RepairValidated:
    return RepairValidated(
        **_common(run_id, top, in_service),  # type: ignore[arg-type]
        hypothesis=top,
        confidence=0.8,
        patch=patch(),
        validation=validation(metric),
    )


def failed_payload(run_id: str = "run-1") -> ValidationFailed:
    return ValidationFailed(
        **_common(run_id),  # type: ignore[arg-type]
        hypothesis="feature_transformation",
        confidence=0.8,
        patch=patch(),
        validation=validation(),
        reason="tests failed",
    )


def upstream_risk_payload() -> UpstreamRiskDetected:
    return UpstreamRiskDetected(
        cause="schema_change",
        asset_urn=UPSTREAM,
        change_summary="column tenure_months dropped",
        change_fingerprint=hashlib.sha256(b"change").hexdigest(),
        affected=[
            AffectedModel(model_urn=MODEL, deployments=[DEPLOYMENT], owners=OWNERS, path=[UPSTREAM, MODEL]),
            AffectedModel(
                model_urn="urn:li:mlModel:(urn:li:dataPlatform:mlflow,upsell,PROD)",
                deployments=[],
                owners=["urn:li:corpuser:bob"],
                path=[UPSTREAM, "urn:li:mlModel:(urn:li:dataPlatform:mlflow,upsell,PROD)"],
            ),
        ],
    )


_PRODUCER = {
    RepairValidated: "validator",
    ValidationFailed: "validator",
    RepairWithheld: "repairer",
    UpstreamRiskDetected: "context",
}


def signed(keys: Keys, payload: BaseModel, incident_id: str = INCIDENT, seconds: int = 0) -> SignedEvent:
    producer = _PRODUCER[type(payload)]
    event = next_event(
        payload,
        producer=producer,
        producer_version="test",
        occurred_at=AT + timedelta(seconds=seconds),
        incident_id=incident_id,
        extra_input_digests=[hashlib.sha256(f"{incident_id}{seconds}".encode()).hexdigest()],
    )
    return seal(event, keys[producer])


def make_keys() -> Keys:
    return Keys(*PRODUCERS)
