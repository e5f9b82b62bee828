"""Comparing snapshots of different providers."""

from __future__ import annotations

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.file_provider import FileContextProvider
from libs.datahub.sdk_snapshot_diff import capability_statements, normalised, snapshot_differences
from tests.unit.providers.provider_test_support import FETCHED_AT, MODEL, SCENARIO


def _file_snapshot() -> ContextSnapshot:
    return FileContextProvider([SCENARIO]).collect(MODEL, FETCHED_AT)


def test_provenance_and_capability_statements_are_not_differences() -> None:
    snapshot = _file_snapshot()
    as_other = snapshot.canonical_json().replace('"provider":"file"', '"provider":"other"')
    relabelled = ContextSnapshot.model_validate_json(as_other.replace("file provider:", "other provider:"))

    assert normalised(snapshot)["provider"] == "*"
    assert capability_statements(snapshot) and all(
        w.startswith("file provider:") for w in capability_statements(snapshot)
    )
    assert relabelled.provider == "other" and relabelled.entities[0].provenance.provider == "other"
    assert snapshot_differences(snapshot, relabelled) == []


def test_a_changed_field_is_named_with_both_values() -> None:
    snapshot = _file_snapshot()
    assert snapshot.model is not None
    changed = snapshot.model_copy(update={"model": snapshot.model.model_copy(update={"version": "4"})})

    differences = snapshot_differences(snapshot, changed)

    assert [(d.section, d.field, d.left, d.right) for d in differences] == [("model", "version", "3", "4")]
    assert differences[0].describe("file", "sdk") == 'model.version: "3" (file) != "4" (sdk)'


def test_an_item_on_one_side_only_is_named_by_its_identity() -> None:
    snapshot = _file_snapshot()
    fewer = snapshot.model_copy(update={"deployments": ()})

    differences = snapshot_differences(snapshot, fewer)

    assert [(d.section, d.field) for d in differences] == [("deployments", None)]
    assert differences[0].describe("file", "mcp").endswith("]: only in file")
