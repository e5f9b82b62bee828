"""Dev harness: ``IncidentInputs`` straight from a bundle folder (docs/scenarios.md).

Trees are ``BUNDLE/workspace/base|candidate``, windows ``BUNDLE/data/<window>/{train,eval}.csv``, the workspace
config and gate come from ``bundle.yaml``, changes from ``datahub/changes.json`` and the context snapshot from
``datahub/metadata.json`` (file provider). The diagnosis runs its evaluations (the four counterfactual pairs
and the finer experiments) with a trial runner under the central policy's budget.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.file_provider import FileContextProvider
from libs.policy.diagnosis import central_diagnosis_policy
from services.diagnoser.inputs import (
    DataWindow,
    GateSpec,
    IncidentInputs,
    MetadataChangeRecord,
    WorkspaceConfig,
)
from services.diagnoser.trials.parallelism import trial_runner


def load_bundle_spec(bundle: Path) -> dict[str, Any]:
    return yaml.safe_load((bundle / "bundle.yaml").read_text(encoding="utf-8"))


def bundle_inputs(bundle: Path, *, fetched_at: str | None = None) -> IncidentInputs:
    bundle = Path(bundle).resolve()
    spec = load_bundle_spec(bundle)
    workspace = WorkspaceConfig.model_validate(spec["workspace"])
    gate = GateSpec.model_validate(spec["gate"])
    base, candidate = bundle / "workspace" / "base", bundle / "workspace" / "candidate"
    approval, incident = window(bundle, "approval"), window(bundle, "incident")
    model = spec["model"]
    return IncidentInputs(
        base_dir=base,
        candidate_dir=candidate,
        approval=approval,
        incident=incident,
        workspace=workspace,
        gate=gate,
        trials=trial_runner(workspace, gate, central_diagnosis_policy()),
        context=context_snapshot(bundle, model["urn"], fetched_at),
        changes=change_records(bundle / "datahub" / "changes.json"),
        dataset_urn=model.get("dataset_urn"),
    )


def window(bundle: Path, name: str) -> DataWindow:
    folder = bundle / "data" / name
    return DataWindow(name=name, train=folder / "train.csv", eval=folder / "eval.csv")  # type: ignore[arg-type]


def context_snapshot(bundle: Path, model_urn: str, fetched_at: str | None) -> ContextSnapshot | None:
    metadata = bundle / "datahub" / "metadata.json"
    if not metadata.is_file():
        return None
    when = fetched_at or datetime.now(UTC).isoformat(timespec="milliseconds")
    return FileContextProvider([metadata]).collect(model_urn, when)


def change_records(path: Path) -> tuple[MetadataChangeRecord, ...]:
    if not path.is_file():
        return ()
    return tuple(change_record(record) for record in json.loads(path.read_text(encoding="utf-8")))


def change_record(record: dict[str, Any]) -> MetadataChangeRecord:
    created = record.get("created") or {}
    urn = record.get("entityUrn", "")
    return MetadataChangeRecord(
        entity_urn=urn,
        entity_type=record.get("entityType") or (urn.split(":")[2] if urn.count(":") >= 2 else ""),
        aspect=record.get("aspectName", ""),
        change_type=record.get("changeType", "UPSERT"),
        time_ms=created.get("time"),
        actor=created.get("actor"),
        previous=aspect_value(record.get("previousAspectValue")),
        current=aspect_value(record.get("aspect")),
    )


def aspect_value(value: Any) -> dict[str, Any] | None:
    """A GenericAspect (``{"value": "<json>"}``) or a plain object, as a plain object."""
    if value is None:
        return None
    if isinstance(value, dict) and isinstance(value.get("value"), str):
        return json.loads(value["value"])
    if isinstance(value, dict) and set(value) == {"json"} and isinstance(value["json"], dict):
        return value["json"]
    return dict(value)
