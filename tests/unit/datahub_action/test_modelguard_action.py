"""The datahub-actions action fails loudly when ModelGuard's broker does not take the record (so the pipeline does
not commit its source offset past it), and forwards only MetadataChangeLog events."""

from __future__ import annotations

import re

import pytest
from datahub.metadata.schema_classes import EntityChangeEventClass, MetadataChangeLogClass
from datahub_actions.action.action_registry import action_registry
from datahub_actions.event.event_envelope import EventEnvelope
from datahub_actions.event.event_registry import (
    ENTITY_CHANGE_EVENT_V1_TYPE,
    METADATA_CHANGE_LOG_EVENT_V1_TYPE,
    EntityChangeEvent,
    MetadataChangeLogEvent,
)
from datahub_actions.pipeline.pipeline_context import PipelineContext

from modelguard.datahub_action import ForwardFailed, ModelGuardAction

DATASET = "urn:li:dataset:(urn:li:dataPlatform:postgres,billing.public.invoices,PROD)"


def _context() -> PipelineContext:
    return PipelineContext(pipeline_name="test", graph=None)


def test_the_action_is_found_by_datahub_actions_under_its_name() -> None:
    assert action_registry.get("modelguard") is ModelGuardAction


def test_a_record_the_broker_never_acknowledges_raises_instead_of_being_acked() -> None:
    action = ModelGuardAction.create({"bootstrap": "127.0.0.1:1", "send_timeout_s": 1.5}, _context())
    mcl = MetadataChangeLogClass(entityType="dataset", entityUrn=DATASET, changeType="UPSERT", aspectName="status")
    event = EventEnvelope(METADATA_CHANGE_LOG_EVENT_V1_TYPE, MetadataChangeLogEvent.from_class(mcl), {})
    with pytest.raises(ForwardFailed, match=f"forwarding the MCL of {re.escape(DATASET)}"):
        action.act(event)
    assert action.forwarded == 0


def test_other_event_types_are_not_forwarded() -> None:
    action = ModelGuardAction.create({"bootstrap": "127.0.0.1:1"}, _context())
    change = EntityChangeEventClass(
        entityType="dataset", entityUrn=DATASET, category="TAG", operation="ADD", auditStamp=None, version=0
    )
    assert action.act(EventEnvelope(ENTITY_CHANGE_EVENT_V1_TYPE, EntityChangeEvent.from_class(change), {}))
    assert (action.forwarded, action.ignored) == (0, 1)


def test_a_config_without_modelguards_bootstrap_is_refused() -> None:
    with pytest.raises(ValueError, match="bootstrap"):
        ModelGuardAction.create({}, _context())
