"""Configuration change: literal values (training parameters) the candidate changed outside the feature
modules, in Python (module constants, keyword arguments, dict entries, by AST), in YAML/JSON/TOML files,
and in the model's hyper-parameters as DataHub logged them (``mlModelProperties``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from libs.python_source.source_encoding import read_source
from services.diagnoser.behavioural_paths import is_test_or_documentation
from services.diagnoser.code_diff import CodeDiff
from services.diagnoser.config_files import flattened_config, is_config_file
from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.inputs import MetadataChangeRecord
from services.diagnoser.literal_sites import literal_sites

METHOD = (
    "literal values of the changed non-feature Python files compared by AST (module constants, keyword "
    "arguments, dict entries); config files compared key by key; mlModelProperties.hyperParams before/after"
)


def config_change_evidence(
    diff: CodeDiff,
    base_dir: Path,
    candidate_dir: Path,
    feature_files: frozenset[str],
    changes: Iterable[MetadataChangeRecord] = (),
    harmless: frozenset[str] = frozenset(),
) -> Evidence:
    """``harmless``: changed files the change isolation measured to carry none of the drop (a version bump)."""
    changed: list[dict[str, Any]] = []
    for file in diff.changed_files:
        if file.path in feature_files or file.path in harmless or is_test_or_documentation(file.path):
            continue
        reader: Callable[[str], Mapping[str, Any]]
        if file.is_python:
            reader = literal_sites
        elif is_config_file(file.path):
            reader = functools.partial(flattened_config, file.path)
        else:
            continue
        before = reader(_text(base_dir / file.path))
        after = reader(_text(candidate_dir / file.path))
        changed.extend({"file": file.path, **entry} for entry in _differences(before, after))
    changed.extend(_hyper_parameter_changes(changes))
    summary = (
        "changed parameter(s): "
        + "; ".join(
            f"{entry['file']} {entry['key']}: {entry['before']!r} -> {entry['after']!r}" for entry in changed[:6]
        )
        if changed
        else "no literal parameter changed outside the feature modules"
    )
    return make_evidence(
        EvidenceKind.CONFIG_CHANGE,
        subject="configuration",
        values={"changed": changed, "count": len(changed)},
        summary=summary,
        source=EvidenceSource.CODE,
        strength=1.0 if changed else 0.0,
        method=METHOD,
    )


def _differences(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    keys = sorted(before.keys() | after.keys())
    return [
        {"key": key, "before": before.get(key), "after": after.get(key)}
        for key in keys
        if before.get(key) != after.get(key)
    ]


def _hyper_parameter_changes(changes: Iterable[MetadataChangeRecord]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for record in changes:
        if record.aspect != "mlModelProperties":
            continue
        before = _hyper_params(record.previous)
        after = _hyper_params(record.current)
        found.extend({"file": record.entity_urn, **entry} for entry in _differences(before, after))
    return found


def _hyper_params(aspect: Mapping[str, Any] | None) -> dict[str, Any]:
    if not aspect:
        return {}
    params: dict[str, Any] = {}
    for entry in aspect.get("hyperParams") or []:
        if isinstance(entry, Mapping) and "name" in entry:
            params[str(entry["name"])] = entry.get("value")
    for name, value in (aspect.get("hyperParameters") or {}).items():
        params[str(name)] = value
    return params


def _text(path: Path) -> str:
    """A Python file's text as Python reads it (PEP 263), a config file's as UTF-8; empty when unreadable."""
    try:
        if path.suffix == ".py":
            return read_source(path).text
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, SyntaxError):  # an UnreadableSource is a SyntaxError
        return ""
