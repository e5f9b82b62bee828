"""The MCL intake's limits come from the central policy; a policy without them is refused, not defaulted."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from libs.datahub.mcl.intake_limits import central_mcl_limits


def test_the_shipped_central_policy_limits_aspects_to_datahub_s_five_mib() -> None:
    limits = central_mcl_limits()
    assert limits.max_aspect_bytes == 5 * 1024 * 1024
    assert 0 < limits.dead_letter_prefix_bytes < limits.max_aspect_bytes


def test_a_policy_without_the_section_or_with_a_bad_limit_is_refused(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    missing.write_text("diagnosis: {}\n")
    with pytest.raises(ValidationError):
        central_mcl_limits(missing)
    zero = tmp_path / "zero.yaml"
    zero.write_text("mcl_intake: {max_aspect_bytes: 0, dead_letter_prefix_bytes: 10}\n")
    with pytest.raises(ValidationError):
        central_mcl_limits(zero)
