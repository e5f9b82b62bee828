"""ModelGuard as a datahub-actions action: forward the MetadataChangeLog events an existing datahub-actions
pipeline already reads and filters into ModelGuard's upstream-risk intake.

Registered as the `modelguard` action (entry point group `datahub_actions.action.plugins`); install with
`pip install 'modelguard[datahub-actions]'`. A pipeline:

    name: modelguard-upstream-risk
    source: {type: kafka, config: {connection: {bootstrap: ..., schema_registry_url: ...}}}
    filters:
      - type: event_type
        config: {filter: {MetadataChangeLogEvent_v1: {event: [{aspectName: schemaMetadata},
                 {aspectName: assertionRunEvent}, {aspectName: dataJobInputOutput}, {aspectName: incidentInfo}]}}}
    action:
      type: modelguard
      config:
        bootstrap: modelguard-kafka:9092        # ModelGuard's bus
        topic: modelguard.datahub-actions-mcl.v1
        producer_config: {security.protocol: SASL_SSL, sasl.mechanism: SCRAM-SHA-512, ...}   # librdkafka keys

Each MCL is sent as DataHub's own JSON form of the record (`MetadataChangeLogClass.to_obj()`), keyed by the entity
URN, to a topic the context service reads besides DataHub's (`MODELGUARD_MCL_TOPICS`), where it is validated,
mirrored and checked for risk exactly like an MCL read from DataHub's Kafka. `act` returns once the broker has
acknowledged the record, so the pipeline commits its source offset only after the record is safe; a failed send
raises, and the pipeline's retry and failure mode apply. Other event types are not forwarded.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from confluent_kafka import KafkaError, Producer
from datahub.configuration.common import ConfigModel
from datahub_actions.action.action import Action
from datahub_actions.event.event_envelope import EventEnvelope
from datahub_actions.event.event_registry import METADATA_CHANGE_LOG_EVENT_V1_TYPE
from datahub_actions.pipeline.pipeline_context import PipelineContext
from pydantic import Field

log = logging.getLogger("modelguard.datahub_action")
DEFAULT_TOPIC = "modelguard.datahub-actions-mcl.v1"


class ModelGuardActionConfig(ConfigModel):
    bootstrap: str = Field(description="ModelGuard's Kafka bootstrap servers (its bus, not DataHub's)")
    topic: str = Field(default=DEFAULT_TOPIC, description="the topic ModelGuard's context service reads")
    producer_config: dict[str, Any] = Field(default_factory=dict, description="librdkafka settings (security)")
    send_timeout_s: float = Field(default=30.0, gt=0)


class ForwardFailed(RuntimeError):
    """The broker did not acknowledge a forwarded MCL; the pipeline retries or fails by its own options."""


class ModelGuardAction(Action):
    def __init__(self, config: ModelGuardActionConfig, ctx: PipelineContext) -> None:
        self.config = config
        self.ctx = ctx
        settings = {**config.producer_config, "bootstrap.servers": config.bootstrap, "enable.idempotence": True}
        self._producer = Producer(settings)
        self.forwarded = 0
        self.ignored = 0

    @classmethod
    def create(cls, config_dict: dict[str, Any], ctx: PipelineContext) -> ModelGuardAction:
        return cls(ModelGuardActionConfig.model_validate(config_dict or {}), ctx)

    def act(self, event: EventEnvelope) -> bool:
        if event.event_type != METADATA_CHANGE_LOG_EVENT_V1_TYPE:
            self.ignored += 1
            return True
        record = event.event.to_obj()  # type: ignore[attr-defined]
        urn = str(record.get("entityUrn") or "")
        failures: list[KafkaError] = []

        def delivered(error: KafkaError | None, _message: Any) -> None:
            if error is not None:
                failures.append(error)

        self._producer.produce(
            self.config.topic,
            value=json.dumps(record, separators=(",", ":")).encode(),
            key=urn.encode(),
            headers={"mg-forwarded-by": b"datahub-actions"},
            on_delivery=delivered,
        )
        pending = self._producer.flush(self.config.send_timeout_s)
        if failures or pending:
            why = str(failures[0]) if failures else f"not acknowledged within {self.config.send_timeout_s:.0f}s"
            raise ForwardFailed(f"forwarding the MCL of {urn} to {self.config.topic}: {why}")
        self.forwarded += 1
        return True

    def close(self) -> None:
        self._producer.flush(self.config.send_timeout_s)
        log.info("modelguard action: %d MCL forwarded, %d other events ignored", self.forwarded, self.ignored)
