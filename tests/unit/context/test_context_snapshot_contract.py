"""The ContextSnapshot contract: frozen, strict, canonical order, JSON round trip, bottom layer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from pydantic import ValidationError

import contracts.context_snapshot as contract
from contracts.context_snapshot import (
    ContextEntity,
    ContextSnapshot,
    LineageEdge,
    LineagePath,
    ModelContext,
    Provenance,
)

NOW = "2024-05-01T12:00:00+00:00"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn_model,PROD)"
RAW = "urn:li:dataset:(urn:li:dataPlatform:postgres,billing.customers,PROD)"
JOB = "urn:li:dataJob:(urn:li:dataFlow:(airflow,churn,prod),train)"


def _provenance(urn: str = MODEL, aspect: str = "mlModelProperties") -> Provenance:
    return Provenance(provider="file", urn=urn, aspect=aspect, fetched_at=NOW, location="metadata.json")


def _entity(urn: str, entity_type: str) -> ContextEntity:
    return ContextEntity(urn=urn, entity_type=entity_type, provenance=_provenance(urn, f"{entity_type}Key"))


def _edge(source: str, target: str, relationship: str) -> LineageEdge:
    return LineageEdge(
        source=source,
        target=target,
        relationship=relationship,
        is_lineage=True,
        target_is_upstream=True,
        aspect="dataJobInputOutput",
        field_path="inputDatasets/*",
        provenance=_provenance(source, "dataJobInputOutput"),
    )


def _snapshot(**collections: object) -> ContextSnapshot:
    return ContextSnapshot(model_urn=MODEL, provider="file", fetched_at=NOW, **collections)


def test_collections_are_stored_sorted_and_without_duplicates() -> None:
    model_entity, raw_entity = _entity(MODEL, "mlModel"), _entity(RAW, "dataset")
    snapshot = _snapshot(
        entities=(raw_entity, model_entity, raw_entity),
        edges=(_edge(MODEL, JOB, "TrainedBy"), _edge(JOB, RAW, "Consumes")),
        warnings=("b", "a", "b"),
    )

    assert [e.urn for e in snapshot.entities] == sorted([MODEL, RAW])
    assert [e.source for e in snapshot.edges] == sorted([JOB, MODEL])
    assert snapshot.warnings == ("a", "b")


def test_the_same_content_in_any_order_gives_byte_identical_json_and_digest() -> None:
    entities = (_entity(MODEL, "mlModel"), _entity(RAW, "dataset"))
    model = ModelContext(
        urn=MODEL,
        training_jobs=(JOB,),
        deployment_statuses={
            "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,b,PROD)": None,
            "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,a,PROD)": "IN_SERVICE",
        },
        provenance=_provenance(),
    )
    one = _snapshot(model=model, entities=entities, warnings=("x", "y"))
    other = _snapshot(model=model, entities=tuple(reversed(entities)), warnings=("y", "x"))

    assert one.model_dump_json() == other.model_dump_json()
    assert one.canonical_json() == other.canonical_json()
    assert one.digest() == other.digest() and one.digest().startswith("sha256:")
    assert list(one.model.deployment_statuses) == sorted(model.deployment_statuses)


def test_json_round_trip_preserves_the_snapshot() -> None:
    path = LineagePath(
        direction="upstream",
        urns=(RAW, JOB, MODEL),
        relationships=("Consumes", "TrainedBy"),
        via_lineage=True,
        stop_reason="root",
    )
    snapshot = _snapshot(
        entities=(_entity(MODEL, "mlModel"),), upstream_paths=(path,), edges=(_edge(JOB, RAW, "Consumes"),)
    )

    assert ContextSnapshot.model_validate_json(snapshot.model_dump_json()) == snapshot


def test_lineage_path_order_is_kept_and_needs_one_relationship_per_hop() -> None:
    path = LineagePath(
        direction="upstream",
        urns=(RAW, JOB, MODEL),
        relationships=("Consumes", "TrainedBy"),
        via_lineage=True,
        stop_reason="root",
    )

    assert path.urns == (RAW, JOB, MODEL)
    with pytest.raises(ValidationError, match="one relationship per hop"):
        LineagePath(direction="upstream", urns=(RAW, MODEL), relationships=(), via_lineage=True, stop_reason="root")


def test_models_are_frozen_and_strict() -> None:
    snapshot = _snapshot()

    with pytest.raises(ValidationError):
        snapshot.provider = "sdk"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Provenance(provider="file", urn=MODEL, aspect="x", fetched_at=NOW, unexpected=1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        ContextEntity(urn=MODEL, entity_type="mlModel", removed="no", provenance=_provenance())  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["yesterday", "2024-05-01T12:00:00"])
def test_timestamps_must_be_iso_with_an_offset(bad: str) -> None:
    with pytest.raises(ValidationError, match="timestamp"):
        Provenance(provider="file", urn=MODEL, aspect="x", fetched_at=bad)


def test_urns_must_be_datahub_urns() -> None:
    with pytest.raises(ValidationError, match="not a DataHub urn"):
        ContextSnapshot(model_urn="churn_model", provider="file", fetched_at=NOW)


def test_the_contract_module_imports_nothing_from_libs_or_services() -> None:
    tree = ast.parse(Path(contract.__file__).read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}

    assert not {name for name in imported if name.split(".")[0] in {"libs", "services", "datahub"}}
