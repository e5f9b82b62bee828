"""The central policy's ``diagnosis`` section: every threshold the diagnosis decides by.

No default lives in code: a policy that lacks a threshold is refused with the name of what is missing, so
what decided an incident is always on record in the policy file; a key the diagnosis does not read is refused.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from libs.policy.central import CentralPolicyError, read_central_policy_document
from libs.policy.errors import PolicyError, first_problem

Share = float


class DiagnosisPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    abstain_below: Share = Field(ge=0, le=1, description="abstain when the best score is below this")
    min_margin: Share = Field(ge=0, le=1, description="abstain when the best leads the runner-up by less")
    confidence_high: Share = Field(ge=0, le=1, description="a score from which the confidence reads high")
    confidence_medium: Share = Field(ge=0, le=1, description="a score from which the confidence reads medium")
    dominant_share: Share = Field(
        gt=0.5, le=1, description="the drop follows the code (or the data) when that side's share is at least this"
    )
    numeric_parse_rate: Share = Field(ge=0, le=1, description="a column is numeric when this share of cells parse")
    max_categories: int = Field(ge=1, description="a text column with at most this many values is categorical")
    psi_drift: float = Field(gt=0, description="a column drifted when its PSI is at least this")
    psi_full: float = Field(gt=0, description="PSI at which drift evidence has full strength")
    ks_drift: Share = Field(gt=0, le=1, description="a numeric column drifted when its KS statistic is at least this")
    rate_rise: Share = Field(ge=0, le=1, description="a null, zero or out-of-range rate rise that counts as a fault")
    rate_rise_z: float = Field(ge=0, description="a rate rise counts only when its two-proportion z is at least this")
    rate_rise_full: Share = Field(gt=0, le=1, description="rate rise at which quality evidence has full strength")
    out_of_range_span: float = Field(
        ge=0, description="a value is out of range beyond the reference range widened by this many range widths"
    )
    unseen_share: Share = Field(ge=0, le=1, description="share of rows with unseen categories that counts")
    unseen_share_full: Share = Field(gt=0, le=1, description="unseen share at which the evidence has full strength")
    rename_max_distance: float = Field(
        ge=0, description="a new column matches a gone one when their distribution distance (KS or PSI) is at most this"
    )
    label_shift: Share = Field(gt=0, le=1, description="label shift when the label's distance (TV or KS) is this")
    label_shift_full: Share = Field(gt=0, le=1, description="label distance at which the evidence has full strength")
    feature_changed_rows: Share = Field(
        ge=0, le=1, description="features differ when at least this share of rows differ between revisions"
    )
    feature_tolerance: float = Field(ge=0, description="relative tolerance under which two feature values are equal")
    carry_share: Share = Field(
        gt=0, le=1, description="a part of the change (or of the columns) carries the drop from this share of it"
    )
    recovery_share: Share = Field(
        gt=0, le=1, description="an intervention recovers the data's loss from this share of it"
    )
    max_evaluations: int = Field(ge=4, description="evaluations per diagnosis, the four counterfactual ones included")
    max_parallel_evaluations: int = Field(ge=1, description="independent evaluations run at once (at most the CPUs)")


def central_diagnosis_policy(path: Path | None = None) -> DiagnosisPolicy:
    """The ``diagnosis`` section of ModelGuard's central policy file (``libs.policy.central``)."""
    try:
        document = read_central_policy_document(path)
        return DiagnosisPolicy.model_validate(document.get("diagnosis") or {})
    except CentralPolicyError as error:
        raise PolicyError(str(error)) from error
    except ValidationError as error:
        raise PolicyError(f"central policy: {first_problem(error, ('diagnosis',))}") from error
