"""The MCL intake's limits come from the central policy; a policy without them is refused, not defaulted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from libs.datahub.mcl.intake_limits import central_mcl_limits
from libs.policy.central import CentralPolicyError


def test_the_shipped_central_policy_limits_aspects_to_datahub_s_five_mib() -> None:
    limits = central_mcl_limits()
    assert limits.max_aspect_bytes == 5 * 1024 * 1024
    assert 0 < limits.dead_letter_prefix_bytes < limits.max_aspect_bytes


def test_a_policy_without_the_section_or_with_a_bad_limit_is_refused_in_one_line(tmp_path: Path) -> None:
    # pydantic's own error was several lines in the context service's start log; the other readers say one
    missing = tmp_path / "missing.yaml"
    missing.write_text("diagnosis: {}\n")
    with pytest.raises(
        CentralPolicyError, match=f"^{re.escape(str(missing))}: mcl_intake\\.max_aspect_bytes: Field required$"
    ):
        central_mcl_limits(missing)
    zero = tmp_path / "zero.yaml"
    zero.write_text("mcl_intake: {max_aspect_bytes: 0, dead_letter_prefix_bytes: 10}\n")
    with pytest.raises(CentralPolicyError, match=r"mcl_intake\.max_aspect_bytes: .*greater than 0") as refused:
        central_mcl_limits(zero)
    assert "\n" not in str(refused.value)
