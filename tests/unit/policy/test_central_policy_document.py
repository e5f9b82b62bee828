"""The central policy's file as every reader of it reads it (libs/policy/central.py): a file that is missing, not
YAML, or not one mapping is a CentralPolicyError in one readable line naming the file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from libs.bus.delivery_policy import DeliveryPolicy, default_delivery_policy
from libs.policy import central
from libs.policy.central import CentralPolicyError, read_central_policy_document
from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.job.image_policy import WorkspaceImagePolicy, default_image_policy
from libs.sandbox.limits import default_sandbox_policy

SECTION_READERS: list[tuple[Callable[[Path | None], object], object]] = [
    (default_delivery_policy, DeliveryPolicy()),
    (default_sandbox_policy, SandboxPolicy()),
    (default_image_policy, WorkspaceImagePolicy()),
]
"""The readers with defaults of their own (libs/policy/central.py, ``installed_central_policy``), and those."""


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("repair: [1, 2\n", "not YAML: "),
        ("- repair: {}\n", "the central policy is a mapping"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "not YAML this reader can take: nested past the parser's limit"),
    ],
    ids=["unparsable", "a list", "nested past the parser"],
)
def test_a_file_that_is_not_one_mapping_is_one_readable_line(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "central.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CentralPolicyError) as raised:
        read_central_policy_document(path)
    assert str(raised.value).startswith(f"{path}: ") and says in str(raised.value)
    assert len(str(raised.value).splitlines()) == 1


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(CentralPolicyError, match=r"cannot read the central policy .*absent\.yaml: No such file"):
        read_central_policy_document(tmp_path / "absent.yaml")


@pytest.mark.parametrize(("read", "defaults"), SECTION_READERS, ids=["delivery", "sandbox", "workspace_images"])
def test_a_reader_s_defaults_only_when_no_central_policy_is_named_or_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: Callable[[Path | None], object], defaults: object
) -> None:
    # a file named (given, or by MODELGUARD_CENTRAL_POLICY) and not there is refused: the platform's limits are not
    # put aside for the code's without a word
    monkeypatch.delenv("MODELGUARD_CENTRAL_POLICY", raising=False)
    monkeypatch.setattr(central, "DEFAULT_CENTRAL_POLICY", tmp_path / "not-installed.yaml")
    assert read(None) == defaults
    with pytest.raises(CentralPolicyError, match=r"given\.yaml: No such file or directory"):
        read(tmp_path / "given.yaml")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(tmp_path / "named.yaml"))
    with pytest.raises(CentralPolicyError, match=r"named\.yaml: No such file or directory"):
        read(None)
