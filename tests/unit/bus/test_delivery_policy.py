"""The central policy's delivery section: backoff between attempts and when an input is given up."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.bus.delivery_policy import DeliveryPolicy, DeliveryPolicyError, default_delivery_policy, delivery_policy_from
from libs.policy.central import CentralPolicyError


def test_waits_double_up_to_the_cap_unless_the_failure_asks_for_longer() -> None:
    policy = DeliveryPolicy(max_attempts=5, backoff_base_s=1.0, backoff_cap_s=10.0)
    assert [policy.delay(n, asked_s=0.1) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert policy.delay(1, asked_s=300.0) == 300.0  # a rate limit's reset is honoured
    assert [policy.exhausted(n) for n in (4, 5, 6)] == [False, True, True]


def test_the_shipped_central_policy_has_a_delivery_section() -> None:
    assert default_delivery_policy() == DeliveryPolicy(max_attempts=10, backoff_base_s=1.0, backoff_cap_s=60.0)


def test_a_missing_named_file_and_a_bad_section_are_one_readable_line(tmp_path: Path) -> None:
    with pytest.raises(CentralPolicyError, match=r"absent\.yaml: No such file or directory"):
        default_delivery_policy(tmp_path / "absent.yaml")
    with pytest.raises(DeliveryPolicyError, match=r"^central\.yaml: delivery\.max_attempts: Input should be greater"):
        delivery_policy_from({"max_attempts": 0}, "central.yaml")
    with pytest.raises(DeliveryPolicyError, match=r"delivery\.retries: Extra inputs are not permitted"):
        delivery_policy_from({"retries": 3}, "central.yaml")
    with pytest.raises(DeliveryPolicyError, match="the delivery section is a mapping"):
        delivery_policy_from([1], "central.yaml")
