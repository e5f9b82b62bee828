"""Downstream impact of a change, answered from the mirror's indexes: models, their deployments and owners.

Without field paths (or for a non-dataset asset) the walk is entity-level over the int lineage index.
With field paths, each column is walked twice (:mod:`libs.datahub.mcl.field_impact_walk`): strictly
along declared column-level lineage (impacts of precision ``field``) and conservatively, assuming
columns without declared sources may carry anything (further impacts of precision ``entity``). Notes
say when a column reaches no ML feature, or no model at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from libs.datahub.mcl.column_lineage_index import ColumnLineageIndex
from libs.datahub.mcl.field_impact_walk import walk_columns_downstream
from libs.datahub.mcl.impact import Impact, ImpactReport, Precision
from libs.datahub.mcl.impact_walk import downstream_models
from libs.datahub.mcl.lineage_index import KIND_DATASET, LineageIndex, kind_of_urn
from libs.datahub.mcl.schema_field_urn import Column, simple_field_path

SchemaPaths = Callable[[str], frozenset[str] | None]


@dataclass(frozen=True)
class ModelFacts:
    deployments: Mapping[str, tuple[str, ...]]
    owners: Mapping[str, tuple[str, ...]]

    def impact(self, model_urn: str, path: tuple[str, ...], precision: Precision) -> Impact:
        return Impact(
            model_urn=model_urn,
            deployments=self.deployments.get(model_urn, ()),
            owners=self.owners.get(model_urn, ()),
            path=path,
            precision=precision,
        )


def impact_report(
    lineage: LineageIndex,
    columns: ColumnLineageIndex,
    schema_paths: SchemaPaths,
    facts: ModelFacts,
    asset_urn: str,
    field_paths: Iterable[str] = (),
) -> ImpactReport:
    paths = tuple(dict.fromkeys(simple_field_path(path) for path in field_paths))
    if paths and kind_of_urn(asset_urn) == KIND_DATASET:
        return _field_level(lineage, columns, schema_paths, facts, asset_urn, paths)
    notes = (f"field paths are ignored for {asset_urn}: only datasets have columns",) if paths else ()
    return _entity_level(lineage, facts, asset_urn, paths, notes)


def _entity_level(
    lineage: LineageIndex, facts: ModelFacts, asset_urn: str, paths: tuple[str, ...], notes: tuple[str, ...]
) -> ImpactReport:
    start = lineage.id_of(asset_urn)
    if start is None:
        return ImpactReport(asset_urn, paths, (), (*notes, f"{asset_urn} has no lineage in the mirror"))
    hits = downstream_models(lineage, start)
    impacts = [
        facts.impact(lineage.urn_of(model), tuple(lineage.urn_of(node) for node in path), "entity")
        for model, path in hits.paths.items()
    ]
    return ImpactReport(asset_urn, paths, _ordered(impacts), notes, hits.truncated)


def _field_level(
    lineage: LineageIndex,
    columns: ColumnLineageIndex,
    schema_paths: SchemaPaths,
    facts: ModelFacts,
    asset_urn: str,
    paths: tuple[str, ...],
) -> ImpactReport:
    view = _MirrorColumnView(lineage, columns, schema_paths)
    best: dict[str, Impact] = {}
    notes: list[str] = []
    truncated = False
    for path in paths:
        strict = walk_columns_downstream(view, asset_urn, (path,), strict=True)
        loose = walk_columns_downstream(view, asset_urn, (path,), strict=False)
        truncated = truncated or strict.truncated or loose.truncated
        for model, model_path in strict.models.items():
            _keep_best(best, facts.impact(model, model_path, "field"))
        for model, model_path in loose.models.items():
            _keep_best(best, facts.impact(model, model_path, "entity"))
        notes.extend(_column_notes(asset_urn, path, strict.features, bool(strict.models), bool(loose.models)))
    return ImpactReport(asset_urn, paths, _ordered(best.values()), tuple(notes), truncated)


def _column_notes(
    asset_urn: str, path: str, strict_features: frozenset[str], strict_models: bool, loose_models: bool
) -> list[str]:
    column = f"column {path!r} of {asset_urn}"
    if not loose_models:
        return [f"{column} does not flow to any ML model (declared column-level lineage covers every route)"]
    notes = []
    if not strict_features:
        notes.append(f"{column} reaches no ML feature through declared column-level lineage")
    if not strict_models:
        notes.append(
            f"{column} reaches models only through columns or datasets whose sources are not declared "
            "at column level: a possible, not a certain, impact"
        )
    return notes


def merge_reports(reports: Sequence[ImpactReport]) -> ImpactReport:
    """One report for several starting points (named after the first): the best impact per model."""
    if not reports:
        raise ValueError("merge_reports needs at least one report")
    best: dict[str, Impact] = {}
    for report in reports:
        for impact in report.impacts:
            _keep_best(best, impact)
    return ImpactReport(
        asset_urn=reports[0].asset_urn,
        field_paths=reports[0].field_paths,
        impacts=_ordered(best.values()),
        notes=tuple(dict.fromkeys(note for report in reports for note in report.notes)),
        truncated=any(report.truncated for report in reports),
    )


def _keep_best(best: dict[str, Impact], candidate: Impact) -> None:
    """Per model, prefer a field-precise impact, then the shorter path."""
    known = best.get(candidate.model_urn)
    if known is None or _rank(candidate) < _rank(known):
        best[candidate.model_urn] = candidate


def _rank(impact: Impact) -> tuple[int, int]:
    return (0 if impact.precision == "field" else 1, len(impact.path))


def _ordered(impacts: Iterable[Impact]) -> tuple[Impact, ...]:
    return tuple(sorted(impacts, key=lambda impact: impact.model_urn))


class _MirrorColumnView:
    """The :class:`ColumnLineageView` the field-level walk reads, over the mirror's indexes."""

    def __init__(self, lineage: LineageIndex, columns: ColumnLineageIndex, schema_paths: SchemaPaths) -> None:
        self._lineage = lineage
        self._columns = columns
        self._schema_paths = schema_paths
        self._schemas: dict[str, frozenset[str] | None] = {}

    def downstream(self, urn: str) -> list[str]:
        node = self._lineage.id_of(urn)
        if node is None:
            return []
        removed = self._lineage.removed
        return [self._lineage.urn_of(n) for n in dict.fromkeys(self._lineage.downstream(node)) if n not in removed]

    def column_downstream(self, column: Column) -> list[Column]:
        return self._columns.downstream(column)

    def declared_paths(self, dataset_urn: str) -> frozenset[str]:
        return self._columns.declared_paths(dataset_urn)

    def schema_paths(self, dataset_urn: str) -> frozenset[str] | None:
        if dataset_urn not in self._schemas:
            self._schemas[dataset_urn] = self._schema_paths(dataset_urn)
        return self._schemas[dataset_urn]
