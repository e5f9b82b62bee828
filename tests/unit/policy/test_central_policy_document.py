"""The central policy's file as every reader of it reads it (libs/policy/central.py): a file that is missing, not
YAML, or not one mapping is a CentralPolicyError in one readable line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.policy.central import CentralPolicyError, read_central_policy_document


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
