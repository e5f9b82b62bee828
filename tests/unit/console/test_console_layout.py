"""The lineage graph's layout: no metadata text reaches Graphviz, and a missing, failing or slow `dot` is one
readable reason instead of a page error."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from contracts.events.context import AffectedModel, UpstreamRiskDetected
from modelguard.console.graph_layout import LayoutUnavailable, dot_source, layout
from modelguard.console.lineage import risk_lineage, short_name

HOSTILE = '"];\n evil [label="<script>x</script>'
DATASET = f"urn:li:dataset:(urn:li:dataPlatform:hive,db.{HOSTILE},PROD)"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn,PROD)"
DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,endpoint,PROD)"


def _risk() -> UpstreamRiskDetected:
    return UpstreamRiskDetected(
        cause="schema_change",
        asset_urn=DATASET,
        change_summary="changed",
        change_fingerprint="c" * 64,
        changed_fields=["age"],
        affected=[AffectedModel(model_urn=MODEL, deployments=[DEPLOYMENT], owners=[], path=[DATASET, MODEL])],
    )


def test_short_names_read_datahub_urns_with_nested_parentheses() -> None:
    assert short_name("urn:li:dataset:(urn:li:dataPlatform:snowflake,analytics.crm.customers,PROD)") == (
        "analytics.crm.customers"
    )
    assert short_name("urn:li:mlFeature:(churn_customer_features,account_age_months)") == "account_age_months"
    field = "urn:li:schemaField:(urn:li:dataset:(urn:li:dataPlatform:hive,db.t,PROD),age)"
    assert short_name(field) == "db.t.age"
    assert short_name("urn:li:corpuser:alice") == "alice"


def test_an_upstream_risk_is_its_changed_field_path_and_deployments_all_on_the_incident_path() -> None:
    graph = risk_lineage(_risk())
    field = f"urn:li:schemaField:({DATASET},age)"
    assert [n.urn for n in graph.nodes] == [field, DATASET, MODEL, DEPLOYMENT]
    assert graph.nodes[0].kind == "schemaField" and graph.nodes[0].label == "age"
    assert all(n.on_path for n in graph.nodes) and all(e.on_path for e in graph.edges)
    assert [(e.source, e.target, e.relationship) for e in graph.edges] == [
        (field, DATASET, "FieldOf"),
        (DATASET, MODEL, "DownstreamOf"),
        (MODEL, DEPLOYMENT, "DeployedTo"),
    ]


def test_no_label_or_urn_goes_into_the_dot_source() -> None:
    graph = risk_lineage(_risk())
    source = dot_source(graph, {n.urn: f"n{i}" for i, n in enumerate(graph.nodes)})
    assert "script" not in source and "urn:" not in source and "evil" not in source
    assert source.count("[width=") == 4 and "n0 -> n1;" in source and "n2 -> n3;" in source


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed (apt-get install graphviz)")
def test_graphviz_places_every_node_left_to_right_along_the_path() -> None:
    placed = layout(risk_lineage(_risk()))
    x = {p.node.urn: p.x for p in placed.nodes}
    assert x[DATASET] < x[MODEL] < x[DEPLOYMENT]
    assert len(placed.edges) == 3 and all(e.path.startswith("M") and " C" in e.path for e in placed.edges)
    assert placed.width > 0 and placed.height > 0
    assert all(0 <= p.y <= placed.height for p in placed.nodes)


def _fake_dot(tmp_path: Path, body: str) -> str:
    script = tmp_path / "dot"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


def test_a_missing_failing_or_slow_dot_is_one_readable_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    graph = risk_lineage(_risk())
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    with pytest.raises(LayoutUnavailable, match="Graphviz is not installed here"):
        layout(graph)
    with pytest.raises(LayoutUnavailable, match=r"Graphviz failed \(exit 3\): syntax error in line 1"):
        layout(graph, _fake_dot(tmp_path, "echo 'syntax error in line 1' >&2; exit 3"))
    with pytest.raises(LayoutUnavailable, match=r"longer than 0\.5 s"):
        layout(graph, _fake_dot(tmp_path, "exec sleep 5"), timeout_s=0.5)
    with pytest.raises(LayoutUnavailable, match="could not be read"):
        layout(graph, _fake_dot(tmp_path, "echo 'node n9 1 1 1 1'"))
