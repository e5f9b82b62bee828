"""Field-level downstream walk: where does a change to some columns of a dataset flow?

A walk state is an entity and the columns ``(dataset, path)`` of the change that reach it (``None``: the
whole entity, as in an entity-level walk). Moving one lineage hop downstream to ``N``:

- ``N`` is a dataset: the columns of ``N`` that fine-grained lineage derives from the carried columns
  (a whole-dataset source or target widens to the whole dataset). In **conservative** mode also every
  column of ``N`` whose sources are *not declared* (it is the downstream of no fine-grained lineage; all
  of them when ``N``'s schema is unknown), since those may come from anything. ``N`` is not reached when
  no column remains: every column of ``N`` has declared sources and none is a carried column.
- ``N`` is an ML feature sourced from dataset ``X``: DataHub links features to datasets, not columns, so
  a feature is reached when its name is a carried column of ``X``; in conservative mode also when its
  name is not a column of ``X`` at all (or ``X``'s schema is unknown).
- ``N`` is a job: it carries the columns through (its outputs are datasets, handled as above); a model
  trained by the job is reached (training reads the whole dataset).
- anything else (models, groups, charts): reached as a whole.

**Strict** mode follows declared column-level lineage only and gives the impacts known at field
precision; conservative mode gives everything that may be affected.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from libs.datahub.mcl.aspect_facts import WHOLE_DATASET
from libs.datahub.mcl.lineage_index import KIND_DATASET, KIND_FEATURE, KIND_JOB, KIND_MODEL, kind_of_urn
from libs.datahub.mcl.schema_field_urn import Column

DEFAULT_MAX_STATES = 50_000
_FEATURE_PREFIX = "urn:li:mlFeature:("

Columns = frozenset[Column] | None


class ColumnLineageView(Protocol):
    def downstream(self, urn: str) -> Iterable[str]:
        """Non-removed entities one lineage hop downstream, in walk order."""
        ...

    def column_downstream(self, column: Column) -> Iterable[Column]: ...

    def declared_paths(self, dataset_urn: str) -> frozenset[str]:
        """Paths of the dataset's columns whose sources some fine-grained lineage declares."""
        ...

    def schema_paths(self, dataset_urn: str) -> frozenset[str] | None:
        """The dataset's column paths from its schemaMetadata; None when unknown."""
        ...


@dataclass(frozen=True)
class FieldWalk:
    models: dict[str, tuple[str, ...]]
    """model urn -> entity urns from the start to the model."""
    features: frozenset[str]
    truncated: bool = False


def walk_columns_downstream(
    view: ColumnLineageView,
    dataset_urn: str,
    paths: Iterable[str],
    *,
    strict: bool,
    max_states: int = DEFAULT_MAX_STATES,
) -> FieldWalk:
    start_columns: frozenset[Column] = frozenset((dataset_urn, path) for path in paths)
    reached: dict[str, Columns] = {dataset_urn: start_columns}
    parent: dict[str, str | None] = {dataset_urn: None}
    queue: deque[tuple[str, Columns]] = deque(((dataset_urn, start_columns),))
    models: list[str] = []
    features: set[str] = set()
    steps = 0
    while queue:
        steps += 1
        if steps > max_states:
            return FieldWalk(_paths(parent, models), frozenset(features), truncated=True)
        node, columns = queue.popleft()
        for neighbour in view.downstream(node):
            carried = _carry(view, node, columns, neighbour, strict)
            if isinstance(carried, bool):  # False: not reached (the only bool _carry returns)
                continue
            new = _merge(reached, neighbour, carried)
            if isinstance(new, bool):  # False: nothing new there
                continue
            if neighbour not in parent:
                parent[neighbour] = node
                kind = kind_of_urn(neighbour)
                if kind == KIND_MODEL:
                    models.append(neighbour)
                elif kind == KIND_FEATURE:
                    features.add(neighbour)
            queue.append((neighbour, new))
    return FieldWalk(_paths(parent, models), frozenset(features))


def _carry(view: ColumnLineageView, node: str, columns: Columns, neighbour: str, strict: bool) -> Columns | bool:
    """The columns carried into ``neighbour`` (None: all of it), or False when it is not reached."""
    if columns is None:
        return None
    kind = kind_of_urn(neighbour)
    if kind == KIND_DATASET:
        return _into_dataset(view, columns, neighbour, strict)
    if kind == KIND_FEATURE:
        return None if _feature_reached(view, node, columns, neighbour, strict) else False
    if kind == KIND_JOB:
        return columns
    return None


def _into_dataset(view: ColumnLineageView, columns: frozenset[Column], dataset: str, strict: bool) -> Columns | bool:
    sources = set(columns) | {(source, WHOLE_DATASET) for source, _ in columns}
    moved = {target for source in sources for target in view.column_downstream(source) if target[0] == dataset}
    if any(path == WHOLE_DATASET for _, path in moved):
        return None
    if not strict:
        schema = view.schema_paths(dataset)
        if schema is None:
            return None
        moved |= {(dataset, path) for path in schema - view.declared_paths(dataset)}
    return frozenset(moved) if moved else False


def _feature_reached(
    view: ColumnLineageView, node: str, columns: frozenset[Column], feature: str, strict: bool
) -> bool:
    name = feature_name(feature)
    if (node, name) in columns:
        return True
    if strict:
        return False
    schema = view.schema_paths(node)
    return schema is None or name not in schema


def _merge(reached: dict[str, Columns], node: str, carried: Columns) -> Columns | bool:
    """Record ``carried`` at ``node``; the part that is new (to walk on), or False when nothing is."""
    if node not in reached:
        reached[node] = carried
        return carried
    known = reached[node]
    if known is None:
        return False
    if carried is None:
        reached[node] = None
        return None
    new = carried - known
    if not new:
        return False
    reached[node] = known | new
    return frozenset(new)


def feature_name(feature_urn: str) -> str:
    """``urn:li:mlFeature:(namespace,name)`` -> ``name`` (the whole urn when it is not shaped so)."""
    if feature_urn.startswith(_FEATURE_PREFIX) and feature_urn.endswith(")"):
        inner = feature_urn[len(_FEATURE_PREFIX) : -1]
        if "," in inner:
            return inner.split(",", 1)[1]
    return feature_urn


def _paths(parent: dict[str, str | None], models: list[str]) -> dict[str, tuple[str, ...]]:
    paths = {}
    for model in models:
        path = [model]
        node = parent[model]
        while node is not None:
            path.append(node)
            node = parent[node]
        paths[model] = tuple(reversed(path))
    return paths
