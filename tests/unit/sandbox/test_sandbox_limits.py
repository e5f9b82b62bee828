"""The sandbox section of the central policy: defaults, validation, the shipped file, narrowing."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.policy.central import DEFAULT_CENTRAL_POLICY, CentralPolicyError
from libs.policy.sandbox import SandboxLimits, SandboxPolicy
from libs.sandbox.limits import (
    SandboxPolicyError,
    default_sandbox_policy,
    read_sandbox_policy,
    sandbox_policy_from,
)


def test_the_shipped_central_policy_has_a_valid_sandbox_section() -> None:
    policy = read_sandbox_policy(DEFAULT_CENTRAL_POLICY)
    assert policy.isolation == "auto" and policy.read_only_workspace
    assert policy.allow_unconfined is False, "fail closed unless a developer says otherwise"
    assert "/etc/modelguard" in policy.hidden
    assert policy.run_as_uid == 65534
    assert policy.limits.memory_bytes == 4 * 1024**3 and policy.limits.output_bytes == 16 * 1024**2


def test_a_missing_section_means_the_defaults() -> None:
    assert sandbox_policy_from(None) == SandboxPolicy()
    assert sandbox_policy_from({"limits": {"cpu_s": 5}}).limits == SandboxLimits(cpu_s=5)


@pytest.mark.parametrize(
    ("section", "where"),
    [
        ({"limits": {"cpu_s": 0}}, "sandbox.limits.cpu_s"),
        ({"limits": {"memory": 1}}, "sandbox.limits.memory"),
        ({"limits": {"nice": -1}}, "sandbox.limits.nice"),
        ({"limits": {"nice": 20}}, "sandbox.limits.nice"),
        ({"isolation": "chroot"}, "sandbox.isolation"),
        ({"isolation": "unshare"}, "sandbox.isolation"),
        ({"hidden": ["relative/path"]}, "sandbox.hidden"),
        ({"run_as_uid": 0}, "sandbox.run_as_uid"),
        ({"read_only_workspace": False}, "sandbox.read_only_workspace"),
        ([1, 2], "the sandbox section is a mapping"),
    ],
)
def test_an_invalid_section_is_refused_with_where(section: object, where: str) -> None:
    with pytest.raises(SandboxPolicyError, match=where):
        sandbox_policy_from(section, "central.yaml")


def test_the_workspace_timeout_narrows_the_wall_time_never_widens_it() -> None:
    limits = SandboxLimits(wall_s=100)
    assert limits.narrowed(wall_s=5).wall_s == 5
    assert limits.narrowed(wall_s=500) is limits
    assert limits.narrowed() is limits


def test_the_central_policy_file_is_found_through_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    central = tmp_path / "central.yaml"
    central.write_text("repair: {max_files: 1}\nsandbox:\n  limits: {wall_s: 7}\n", encoding="utf-8")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(central))
    assert default_sandbox_policy().limits.wall_s == 7
    central.write_text("sandbox:\n  limits: {wall_s: 8}\n", encoding="utf-8")
    assert default_sandbox_policy().limits.wall_s == 8
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(tmp_path / "absent.yaml"))
    with pytest.raises(CentralPolicyError, match=r"absent\.yaml: No such file or directory"):
        default_sandbox_policy()  # the platform's limits are not put aside for the code's without a word


def test_a_central_policy_file_named_is_read_not_the_environment_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = tmp_path / "named.yaml"
    named.write_text("sandbox:\n  limits: {wall_s: 9}\n", encoding="utf-8")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(tmp_path / "absent.yaml"))
    assert default_sandbox_policy(named).limits.wall_s == 9
    with pytest.raises(CentralPolicyError, match=r"absent\.yaml"):
        default_sandbox_policy()
