"""The central policy's `ci` section: one key per outcome, strict, with defaults (only a passed gate passes the
job), carried into every model's effective policy."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from contracts.outcomes import RUN_OUTCOMES as OUTCOMES
from libs.bundle.load import load_bundle
from libs.policy.ci import CiOutcomes, CiPolicy
from libs.policy.effective import effective_policy, effective_policy_bytes, read_central_policy
from libs.policy.errors import PolicyError
from libs.policy.model_policy import parse_policy
from modelguard.investigation_outcome import OUTCOME_EXIT_CODES
from modelguard.stack import REPO_ROOT, SCENARIOS

CHURN = load_bundle(SCENARIOS / "churn-monthly-spend")


def test_every_outcome_has_a_key_and_only_a_passed_gate_passes_by_default() -> None:
    assert set(CiOutcomes.model_fields) == set(OUTCOMES) == set(OUTCOME_EXIT_CODES)
    defaults = CiPolicy()
    assert {o: defaults.result_for(o) for o in OUTCOMES} == {
        o: "pass" if o == "gate_passed" else "fail" for o in OUTCOMES
    }
    assert defaults.result_for("upstream_risk") == "fail", "an outcome the policy does not name fails the job"


def test_the_shipped_central_policy_says_the_defaults_and_every_effective_policy_carries_it() -> None:
    central = yaml.safe_load((REPO_ROOT / "policy" / "central.yaml").read_text())
    assert CiPolicy.model_validate(central["ci"]) == CiPolicy()
    policy = parse_policy(effective_policy_bytes(CHURN, read_central_policy()), "churn")
    assert policy.ci == CiPolicy()


def test_a_central_policy_may_pass_a_validated_repair(tmp_path: Path) -> None:
    central = yaml.safe_load((REPO_ROOT / "policy" / "central.yaml").read_text())
    central["ci"]["outcomes"]["repair_validated"] = "pass"
    path = tmp_path / "central.yaml"
    path.write_text(yaml.safe_dump(central))
    document = effective_policy(CHURN, read_central_policy(path))
    assert parse_policy(yaml.safe_dump(document).encode(), "churn").ci.result_for("repair_validated") == "pass"


@pytest.mark.parametrize(
    ("section", "said"),
    [
        ({"outcomes": {"repair_validatd": "pass"}}, "ci.outcomes.repair_validatd: unknown key"),
        ({"outcomes": {"abstained": "green"}}, "ci.outcomes.abstained: Input should be 'pass' or 'fail'"),
        ({"fail_on": ["abstained"]}, "ci.fail_on: unknown key"),
    ],
)
def test_an_unknown_outcome_or_result_is_refused_in_one_line(section: dict, said: str) -> None:
    document = effective_policy(CHURN, read_central_policy()) | {"ci": section}
    with pytest.raises(PolicyError) as refused:
        parse_policy(yaml.safe_dump(document).encode(), "p.yaml")
    assert str(refused.value) == f"p.yaml: {said}"
