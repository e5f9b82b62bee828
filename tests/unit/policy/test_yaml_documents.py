"""A YAML document parsed once per content: the same value as PyYAML's safe loader, each caller its own copy, a
changed text parsed again, an error raised every time."""

from __future__ import annotations

import pytest
import yaml

from libs.policy import yaml_documents
from libs.policy.yaml_documents import safe_load_once

DOCUMENTS = [
    "gate:\n  metric: f1\n  min: 0.7\napplies_to: ['*']\n",
    b"a: &shared [1, 2]\nb: *shared\nc: 2026-12-04\nd: 0x1f\ne: .nan\nf: yes\n",
    "\ufeffkey: value\n",
    "".encode("utf-16"),
    "- 1\n- two\n- {three: 3.0}\n",
    "",
]


@pytest.mark.parametrize("document", DOCUMENTS)
def test_the_value_is_the_safe_loaders(document: str | bytes) -> None:
    expected = yaml.safe_load(document)
    first, again = safe_load_once(document), safe_load_once(document)
    assert repr(first) == repr(expected) and repr(again) == repr(first)  # repr: a NaN is not equal to itself
    assert type(first) is type(expected)


def test_the_document_is_parsed_once_and_each_caller_gets_its_own_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    yaml_documents._parsed.cache_clear()
    parsed: list[object] = []
    real = yaml.safe_load

    def counting(data: object) -> object:
        parsed.append(data)
        return real(data)

    monkeypatch.setattr(yaml_documents.yaml, "safe_load", counting)
    text = "applies_to: ['churn-*']\nworkspace: {commands: [a, b]}\n"
    first = safe_load_once(text)
    first["applies_to"].append("*")  # a caller that changes what it got
    first["workspace"]["commands"].clear()
    second = safe_load_once(text)
    assert second == {"applies_to": ["churn-*"], "workspace": {"commands": ["a", "b"]}}
    assert len(parsed) == 1
    assert safe_load_once(text + "extra: 1\n")["extra"] == 1  # another text: parsed again
    assert len(parsed) == 2


def test_a_document_that_does_not_parse_raises_every_time() -> None:
    for _ in range(2):
        with pytest.raises(yaml.YAMLError):
            safe_load_once("key: [unclosed\n")
    with pytest.raises(yaml.constructor.ConstructorError):
        safe_load_once("!!python/object/apply:os.system ['true']\n")  # the safe loader's refusal, kept
