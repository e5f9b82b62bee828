"""What an added line of a configuration file (YAML, JSON, TOML, INI) may never say: a YAML tag that
builds Python objects (``!!python/object/apply:os.system``, read by an unsafe ``yaml.load``), a URL, a path
in a home directory, a ``..`` component or a credentials file, or a label column's name as a word (a
feature list that gains the label leaks it into training)."""

from __future__ import annotations

import re

from libs.patch_guard.refused_names import RefusedCategory
from libs.patch_guard.string_references import CREDENTIAL_FILES, PARENT_COMPONENT, URL, names_label

PYTHON_TAG = re.compile(r"!!?python/")
HOME_PATH_VALUE = re.compile(r"(?:^|[\s\"':=\[,(])~[A-Za-z0-9_.-]*[/\\]")


def config_line_problems(text: str, labels: tuple[str, ...]) -> list[tuple[RefusedCategory, str]]:
    """Every reason an added configuration line is refused."""
    problems: list[tuple[RefusedCategory, str]] = []
    if PYTHON_TAG.search(text):
        problems.append(("config_text", "a YAML tag that builds Python objects"))
    if URL.search(text):
        problems.append(("outside_reference", "a URL"))
    if CREDENTIAL_FILES.search(text):
        problems.append(("outside_reference", "a credentials file"))
    if HOME_PATH_VALUE.search(text):
        problems.append(("outside_reference", "a path in a home directory"))
    if PARENT_COMPONENT.search(text):
        problems.append(("outside_reference", "a '..' path component"))
    if (label := names_label(text, labels)) is not None:
        problems.append(("label_reference", f"the label column {label!r}"))
    return problems
