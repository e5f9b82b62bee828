"""ModelGuard inside an existing datahub-actions deployment: datahub-actions' own pipeline runner (`Pipeline.create`
from a pipeline config, the `modelguard` action found through its entry point) reads MCL events from a file
source, applies its own filter, and the action forwards what passes to ModelGuard's bus; the running stack's context
service turns the schema change into an upstream risk naming the model and its deployment, and publishes it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from datahub.metadata.schema_classes import DatasetPropertiesClass, MetadataChangeLogClass
from datahub_actions.event.event_envelope import EventEnvelope
from datahub_actions.event.event_registry import METADATA_CHANGE_LOG_EVENT_V1_TYPE, MetadataChangeLogEvent
from datahub_actions.pipeline.pipeline import Pipeline
from datahub_actions.pipeline.pipeline_context import PipelineContext
from datahub_actions.source.event_source import EventSource
from datahub_actions.source.event_source_registry import event_source_registry

from libs.datahub.mcl.record_builder import mcl_record
from libs.datahub.mcp_file import load_mcp_file
from libs.ledger import LedgerStore
from libs.signing.keys import KeyRegistry
from modelguard.datahub_action import DEFAULT_TOPIC
from modelguard.emit_mcl import changed_schema
from modelguard.incident_log import incident_events
from tests.e2e.conftest import CHURN
from tests.support.kafka_reader import read_topic
from tests.support.running_stack import RunningStack, running_stack

pytestmark = [pytest.mark.e2e, pytest.mark.broker]

CHANGE = CHURN / "datahub" / "changes" / "rename-account-age.yaml"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"
DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,churn-endpoint,PROD)"


class JsonLinesMclSource(EventSource):
    """A file of MCLs in DataHub's JSON form, one per line: what a test gives datahub-actions' pipeline."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.acked: list[bool] = []

    @classmethod
    def create(cls, config_dict: dict[str, Any], ctx: PipelineContext) -> JsonLinesMclSource:
        return cls(Path(config_dict["path"]))

    def events(self) -> Iterable[EventEnvelope]:
        for line in self.path.read_text().splitlines():
            mcl = MetadataChangeLogClass.from_obj(json.loads(line))
            yield EventEnvelope(METADATA_CHANGE_LOG_EVENT_V1_TYPE, MetadataChangeLogEvent.from_class(mcl), {})

    def ack(self, event: EventEnvelope, processed: bool = True) -> None:
        self.acked.append(processed)

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    topics = f"MetadataChangeLog_Versioned_v1,MetadataChangeLog_Timeseries_v1,{DEFAULT_TOPIC}"
    with running_stack(tmp_path_factory.mktemp("actions-stack"), {"MODELGUARD_MCL_TOPICS": topics}) as running:
        yield running


def _mcl_lines(path: Path) -> str:
    """The scenario's schema change (a renamed column) and an unrelated properties update, as DataHub logs them."""
    spec = yaml.safe_load(CHANGE.read_text())
    records = load_mcp_file(CHURN / "datahub" / "metadata.json").records
    current = next(r.aspect for r in records if r.urn == spec["urn"] and r.aspect_name == "schemaMetadata")
    renamed = changed_schema(current, spec["change"], str(spec["field"]), spec.get("to"))
    change = mcl_record(spec["urn"], "schemaMetadata", renamed, previous=current, run_id="ingest-42")
    other = mcl_record(spec["urn"], "datasetProperties", DatasetPropertiesClass(description="nightly"), run_id="x")
    lines = [json.dumps(MetadataChangeLogClass.from_obj(r).to_obj()) for r in (other, change)]
    path.write_text("\n".join(lines) + "\n")
    return str(spec["urn"])


def _published_risk(stack: RunningStack, asset: str, timeout_s: float = 120) -> Any:
    store, registry = LedgerStore(stack.settings.ledger_url), KeyRegistry.load(stack.settings.key_registry_path)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for head in store.incidents():
            events = incident_events(store, head.incident_id, registry)
            types = [e.event.meta.event_type for e in events]
            if (
                types[:1] == ["UpstreamRiskDetected"]
                and "Published" in types
                and events[0].event.payload.asset_urn == asset
            ):
                return events[0].event.payload
        time.sleep(0.25)
    return None


def test_a_datahub_actions_pipeline_forwards_its_filtered_mcl_into_modelguards_upstream_risk_intake(
    stack: RunningStack, tmp_path: Path
) -> None:
    asset = _mcl_lines(tmp_path / "mcl.jsonl")
    event_source_registry.register("modelguard-test-jsonl", JsonLinesMclSource)
    pipeline = Pipeline.create(
        {
            "name": "modelguard-upstream-risk",
            "source": {"type": "modelguard-test-jsonl", "config": {"path": str(tmp_path / "mcl.jsonl")}},
            "filters": [
                {
                    "type": "event_type",
                    "config": {"filter": {"MetadataChangeLogEvent_v1": {"event": [{"aspectName": "schemaMetadata"}]}}},
                }
            ],
            "action": {"type": "modelguard", "config": {"bootstrap": stack.bootstrap}},
            "options": {"failure_mode": "THROW"},
        }
    )
    pipeline.run()
    pipeline.stop()

    assert (pipeline.action.forwarded, pipeline.action.ignored) == (1, 0), "the pipeline's filter dropped the other"
    [record] = [r for r in read_topic(stack.bootstrap, DEFAULT_TOPIC, expected=1) if r.key == asset.encode()]
    forwarded = json.loads(record.value)
    assert (forwarded["aspectName"], forwarded["entityUrn"]) == ("schemaMetadata", asset)
    assert dict(record.headers)["mg-forwarded-by"] == b"datahub-actions"

    risk = _published_risk(stack, asset)
    assert risk is not None, "the context service raised and the publisher published the upstream risk"
    assert risk.cause == "schema_change" and [a.model_urn for a in risk.affected] == [MODEL]
    assert [d for a in risk.affected for d in a.deployments] == [DEPLOYMENT]
