"""Where two providers' snapshots of the same model differ, ignoring what must differ (who read it).

Provenance ``provider`` and ``location`` are blanked, and each provider's own capability statements
(warnings starting ``"<provider> provider:"``) are set aside; everything else is compared. Items of a
section are matched by their identity fields (urns, field paths, edge ends), so a difference reads as
"this field of this item" rather than as two unrelated items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from contracts.context_snapshot import ContextSnapshot

_IDENTITY_FIELDS = (
    "urn", "field_urn", "assertion_urn", "incident_urn", "entity_urn", "owner_urn", "dataset_urn", "source",
    "target", "relationship", "field_path", "upstream", "downstream", "declared_by", "direction", "urns",
)  # fmt: skip
_PROVENANCE_KEYS = {"provider", "urn", "aspect", "fetched_at"}


@dataclass(frozen=True)
class SnapshotDifference:
    """One difference: ``section`` and item ``key``; ``field`` is None when the item is on one side only."""

    section: str
    key: str
    field: str | None
    left: Any
    right: Any

    def describe(self, left_name: str, right_name: str) -> str:
        where = f"{self.section}[{self.key}]" if self.key else self.section
        if self.field is None:
            side = left_name if self.right is None else right_name
            return f"{where}: only in {side}"
        return f"{where}.{self.field}: {_short(self.left)} ({left_name}) != {_short(self.right)} ({right_name})"


def normalised(snapshot: ContextSnapshot) -> dict[str, Any]:
    """The snapshot as JSON with provenance provider/location blanked and capability statements removed."""
    data: dict[str, Any] = _blank_provenance(snapshot.model_dump(mode="json"))  # a dict stays a dict
    data["provider"] = "*"
    data["warnings"] = [w for w in data["warnings"] if not w.startswith(f"{snapshot.provider} provider:")]
    return data


def capability_statements(snapshot: ContextSnapshot) -> list[str]:
    return [w for w in snapshot.warnings if w.startswith(f"{snapshot.provider} provider:")]


def snapshot_differences(left: ContextSnapshot, right: ContextSnapshot) -> list[SnapshotDifference]:
    a, b = normalised(left), normalised(right)
    differences: list[SnapshotDifference] = []
    for section in a:
        if a[section] == b[section]:
            continue
        if section == "warnings":
            differences += [SnapshotDifference(section, w, None, w, None) for w in a[section] if w not in b[section]]
            differences += [SnapshotDifference(section, w, None, None, w) for w in b[section] if w not in a[section]]
        elif isinstance(a[section], list):
            differences += _list_differences(section, a[section], b[section])
        elif isinstance(a[section], dict) and isinstance(b[section], dict):
            differences += _item_differences(section, "", a[section], b[section])
        else:
            differences.append(SnapshotDifference(section, "", "value", a[section], b[section]))
    return differences


def _list_differences(section: str, left: list[Any], right: list[Any]) -> list[SnapshotDifference]:
    by_key_left = {_identity(item): item for item in left}
    by_key_right = {_identity(item): item for item in right}
    differences = []
    for key in sorted(by_key_left.keys() | by_key_right.keys()):
        one, other = by_key_left.get(key), by_key_right.get(key)
        if one == other:
            continue
        if one is None or other is None:
            differences.append(SnapshotDifference(section, key, None, one, other))
        else:
            differences += _item_differences(section, key, one, other)
    return differences


def _item_differences(section: str, key: str, left: dict[str, Any], right: dict[str, Any]) -> list[SnapshotDifference]:
    return [
        SnapshotDifference(section, key, name, left.get(name), right.get(name))
        for name in sorted(left.keys() | right.keys())
        if left.get(name) != right.get(name)
    ]


def _identity(item: Any) -> str:
    if not isinstance(item, dict):
        return json.dumps(item, sort_keys=True)
    parts = [item[name] for name in _IDENTITY_FIELDS if name in item]
    return " ".join(" > ".join(p) if isinstance(p, list) else str(p) for p in parts)


def _blank_provenance(value: Any) -> Any:
    if isinstance(value, dict):
        if value.keys() >= _PROVENANCE_KEYS:
            return {**value, "provider": "*", "location": None}
        return {key: _blank_provenance(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_blank_provenance(item) for item in value]
    return value


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."
