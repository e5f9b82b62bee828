"""The lineage picture's graph: from the upstream datasets (and changed field) through jobs and features to the
model and its deployments, with the incident's path marked.

A regression's graph is the context snapshot's lineage paths (upstream, deployment, downstream); its path runs
from the datasets the diagnosis places the cause in, through the features named by its hints when it names
any, to the model and its deployments. An upstream risk's graph is each affected model's path from the changed
asset, every hop of it on the path, and the deployments it reaches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contracts.context_snapshot import ContextSnapshot
from contracts.events.context import UpstreamRiskDetected
from contracts.events.diagnosis import DiagnosisReport

DEPLOYED_TO = "DeployedTo"
FIELD_OF = "FieldOf"


@dataclass(frozen=True)
class LineageNode:
    urn: str
    kind: str
    """The urn's entity type: dataset, dataJob, mlFeature, mlModel, mlModelDeployment, schemaField, ..."""
    label: str
    on_path: bool


@dataclass(frozen=True)
class LineageEdge:
    source: str
    target: str
    relationship: str
    on_path: bool


@dataclass(frozen=True)
class LineageGraph:
    nodes: list[LineageNode]
    edges: list[LineageEdge]


def regression_lineage(snapshot: ContextSnapshot, report: DiagnosisReport | None) -> LineageGraph:
    paths = [(p.urns, p.relationships) for p in (*snapshot.upstream_paths, *snapshot.downstream_paths)]
    marked = _incident_paths(snapshot, report)
    names = {entity.urn: entity.name for entity in snapshot.entities if entity.name}
    return _graph(paths, marked, names)


def risk_lineage(risk: UpstreamRiskDetected) -> LineageGraph:
    """Each changed field (a schemaField node) leads into the changed asset, which leads down each path."""
    fields = {f"urn:li:schemaField:({risk.asset_urn},{field})": field for field in risk.changed_fields}
    paths: list[tuple[Sequence[str], Sequence[str]]] = [((urn, risk.asset_urn), (FIELD_OF,)) for urn in fields]
    for affected in risk.affected:
        hops = list(affected.path)
        if len(hops) >= 2:
            paths.append((hops, ["DownstreamOf"] * (len(hops) - 1)))
        paths += [((affected.model_urn, d), (DEPLOYED_TO,)) for d in affected.deployments]
    return _graph(paths, set(range(len(paths))), fields)


def _incident_paths(snapshot: ContextSnapshot, report: DiagnosisReport | None) -> set[int]:
    """Indexes (upstream paths first, then downstream) of the paths the incident runs along."""
    upstream, downstream = snapshot.upstream_paths, snapshot.downstream_paths
    causes = set(report.context_summary.cause_datasets) if report else set()
    columns = _named_columns(report) if report else set()
    chosen = [i for i, p in enumerate(upstream) if not causes or p.urns[0] in causes]
    through_named = [i for i in chosen if any(short_name(u) in columns for u in upstream[i].urns[1:-1])]
    marked = set(through_named or chosen)
    marked |= {len(upstream) + i for i, p in enumerate(downstream) if p.relationships == (DEPLOYED_TO,)}
    return marked


def _named_columns(report: DiagnosisReport) -> set[str]:
    hints = report.repair_hints
    return {
        *(r.old for r in hints.renamed_columns),
        *(r.new for r in hints.renamed_columns),
        *hints.text_numeric_columns,
        *hints.unseen_categories,
        *hints.null_columns,
    }


def _graph(
    paths: Sequence[tuple[Sequence[str], Sequence[str]]], marked: set[int], names: dict[str, str]
) -> LineageGraph:
    nodes: dict[str, bool] = {}
    edges: dict[tuple[str, str], LineageEdge] = {}
    for index, (urns, relationships) in enumerate(paths):
        on_path = index in marked
        for urn in urns:
            nodes[urn] = nodes.get(urn, False) or on_path
        for source, target, relationship in zip(urns, urns[1:], relationships, strict=False):
            known = edges.get((source, target))
            marked_before = known is not None and known.on_path
            edges[(source, target)] = LineageEdge(source, target, relationship, on_path or marked_before)
    return LineageGraph(
        [LineageNode(u, entity_kind(u), names.get(u) or short_name(u), on) for u, on in nodes.items()],
        list(edges.values()),
    )


def entity_kind(urn: str) -> str:
    parts = urn.split(":", 3)
    return parts[2] if len(parts) > 3 and parts[0] == "urn" else "unknown"


def short_name(urn: str) -> str:
    """``urn:li:dataset:(urn:li:dataPlatform:snowflake,crm.customers,PROD)`` -> ``crm.customers``; a
    schemaField -> ``<dataset name>.<field>``."""
    parts = urn.split(":", 3)
    if len(parts) < 4:
        return urn
    body = parts[3]
    if not (body.startswith("(") and body.endswith(")")):
        return body
    fields = _top_level(body[1:-1])
    if parts[2] == "schemaField" and len(fields) == 2:
        return f"{short_name(fields[0])}.{fields[1]}"
    return fields[1] if len(fields) >= 2 else fields[0]


def _top_level(text: str) -> list[str]:
    fields, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            fields.append(text[start:index])
            start = index + 1
    fields.append(text[start:])
    return fields
