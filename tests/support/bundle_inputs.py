"""Dev harness: ``IncidentInputs`` straight from a bundle folder (docs/scenarios.md).

Trees are ``BUNDLE/workspace/base|candidate``, windows ``BUNDLE/data/<window>/{train,eval}.csv``, the workspace
config and gate come from ``bundle.yaml``, changes from ``datahub/changes.json`` and the context snapshot from
``datahub/metadata.json`` (file provider). The four counterfactual metrics are measured by running the
workspace's evaluate command on every (revision, window) pair, with ``{train}`` and ``{eval}`` filled in.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from contracts.context_snapshot import ContextSnapshot
from libs.datahub.file_provider import FileContextProvider
from libs.workspace.argv_template import render_argv
from libs.workspace.runner import run_command
from services.diagnoser.inputs import (
    CounterfactualMetrics,
    DataWindow,
    GateSpec,
    IncidentInputs,
    MetadataChangeRecord,
    WorkspaceConfig,
)


def load_bundle_spec(bundle: Path) -> dict[str, Any]:
    return yaml.safe_load((bundle / "bundle.yaml").read_text(encoding="utf-8"))


def bundle_inputs(bundle: Path, *, fetched_at: str | None = None) -> IncidentInputs:
    bundle = Path(bundle).resolve()
    spec = load_bundle_spec(bundle)
    workspace = workspace_config(spec["workspace"])
    gate = GateSpec(
        metric=spec["gate"]["metric"], direction=spec["gate"]["direction"], tolerance=float(spec["gate"]["tolerance"])
    )
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
        metrics=counterfactual_metrics(base, candidate, approval, incident, workspace, gate.metric),
        context=context_snapshot(bundle, model["urn"], fetched_at),
        changes=change_records(bundle / "datahub" / "changes.json"),
        dataset_urn=model.get("dataset_urn"),
    )


def workspace_config(section: dict[str, Any]) -> WorkspaceConfig:
    def argv(name: str) -> tuple[str, ...] | None:
        return tuple(section[name]) if section.get(name) else None

    return WorkspaceConfig(
        evaluate=tuple(section["evaluate"]),
        label=section["label"],
        feature_modules=tuple(section.get("feature_modules") or ()),
        features=argv("features"),
        tests=argv("tests"),
        repair_paths=tuple(section.get("repair_paths") or ()),
        categorical_defaults=dict(section.get("categorical_defaults") or {}),
        null_fills=dict(section.get("null_fills") or {}),
        timeout_s=float(section.get("timeout_s", 300)),
    )


def window(bundle: Path, name: str) -> DataWindow:
    folder = bundle / "data" / name
    return DataWindow(name=name, train=folder / "train.csv", eval=folder / "eval.csv")  # type: ignore[arg-type]


def evaluate_metric(tree: Path, data: DataWindow, workspace: WorkspaceConfig, metric: str) -> float | None:
    """The gate metric of ``tree`` trained on the window's train rows and scored on its eval rows."""
    argv = render_argv(workspace.evaluate, {"train": str(data.train.resolve()), "eval": str(data.eval.resolve())})
    result = run_command(argv, cwd=tree, timeout_s=workspace.timeout_s)
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    if not result.succeeded or not lines:
        return None
    value = json.loads(lines[-1]).get("metrics", {}).get(metric)
    return float(value) if value is not None else None


def counterfactual_metrics(
    base: Path, candidate: Path, approval: DataWindow, incident: DataWindow, workspace: WorkspaceConfig, metric: str
) -> CounterfactualMetrics:
    return CounterfactualMetrics(
        base_on_approval=evaluate_metric(base, approval, workspace, metric),
        base_on_incident=evaluate_metric(base, incident, workspace, metric),
        candidate_on_approval=evaluate_metric(candidate, approval, workspace, metric),
        candidate_on_incident=evaluate_metric(candidate, incident, workspace, metric),
    )


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
