"""The topic map: one contract per event type and major version, one topic per contract."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from contracts.events.context import ContextCollected, UpstreamRiskDetected
from contracts.events.diagnosis import DiagnosisAbstained, DiagnosisCompleted
from contracts.events.evaluation import EnvironmentFailed, EvaluationPassed, EvaluationReported, RegressionDetected
from contracts.events.publication import Published
from contracts.events.repair import RepairProposed, RepairWithheld
from contracts.events.validation import RepairValidated, ValidationFailed
from contracts.history.evaluation_reported_v1 import EvaluationReported as EvaluationReportedV1
from contracts.meta import EventMeta
from contracts.upcasting import upcast_payload

P = TypeVar("P", bound=BaseModel)

DEAD_LETTER_TOPIC = "modelguard.dead-letter.v1"


class Event(BaseModel, Generic[P]):
    """An event: its metadata and its typed payload. The payload's canonical JSON is what gets signed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    meta: EventMeta
    payload: P


@dataclass(frozen=True)
class Contract:
    event_type: str
    version: str
    payload_model: type[BaseModel]

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    @property
    def topic(self) -> str:
        return topic_of(self.event_type, self.major)

    @property
    def topics(self) -> tuple[str, ...]:
        """Where its events are read: this major's topic, then each past major's still written to during a
        rolling deploy (its events are upcast on reading)."""
        past = sorted((c for (t, _), c in PAST_CONTRACTS.items() if t == self.event_type), key=lambda c: c.major)
        return (self.topic, *(c.topic for c in past))

    @property
    def event_model(self) -> type[Event[Any]]:
        return _event_model(self.payload_model)


@cache
def _event_model(payload_model: type[BaseModel]) -> type[Event[Any]]:
    """`Event[payload_model]`, looked up once: pydantic finds a parametrised generic again by hashing its
    arguments, a few microseconds on every event read (the same class either way)."""
    return Event[payload_model]  # type: ignore[valid-type]


# Versions: the major names the topic and the schema file; a minor adds optional fields with defaults. A reader of
# 1.1 reads 1.0 events (the new fields take their defaults) and a reader of 1.0 reads 1.1 events (it ignores the
# fields it does not know, as a tolerant reader), so services can be upgraded one at a time during a rolling
# deploy; an event of the reader's own version must match its model exactly (unknown keys are refused).
# 1.1 of the diagnosis, repair and validation events: the report's context summary carries the owners per asset
# and the cause's datasets (`ContextSummary.model_ownership`, `dataset_ownership`, `cause_datasets`), and
# `RepairWithheld.owners` says who to tell per affected asset. EnvironmentFailed 1.0 (a new contract, so a new
# topic): the detector's referee could not have the environment a revision declares. UpstreamRiskDetected 1.1:
# `source_urn`, the assertion or incident that reported the change, which DataHub incidents link to. Published
# 1.1: `notifications`, the Slack and webhook messages sent for the incident's state. UpstreamRiskDetected 1.2:
# `changed_fields`, the changed asset's columns the change touches. Published 1.2: `ChannelResult.url`, the web
# address GitHub answered with for the comment and the check run (live publications), which the console links.
# A major changes what a field means or removes one; its events go to a new topic, and the majors before it stay
# readable: PAST_CONTRACTS keeps each one's last payload model (contracts/history/, never edited) to check what
# its writers signed, and contracts/upcasting.py carries such an event forward one major at a time.
# EvaluationReported 2.0: `claimed` (one optional claim of both revisions' figures) replaces `baseline_metrics`
# and `candidate_metrics`, whose two empty maps meant "no claim".
CONTRACTS: dict[str, Contract] = {
    c.event_type: c
    for c in (
        Contract("EvaluationReported", "2.0", EvaluationReported),
        Contract("RegressionDetected", "1.0", RegressionDetected),
        Contract("EvaluationPassed", "1.0", EvaluationPassed),
        Contract("EnvironmentFailed", "1.0", EnvironmentFailed),
        Contract("ContextCollected", "1.0", ContextCollected),
        Contract("UpstreamRiskDetected", "1.2", UpstreamRiskDetected),
        Contract("DiagnosisCompleted", "1.1", DiagnosisCompleted),
        Contract("DiagnosisAbstained", "1.1", DiagnosisAbstained),
        Contract("RepairProposed", "1.1", RepairProposed),
        Contract("RepairWithheld", "1.1", RepairWithheld),
        Contract("RepairValidated", "1.1", RepairValidated),
        Contract("ValidationFailed", "1.1", ValidationFailed),
        Contract("Published", "1.2", Published),
    )
}

PAYLOAD_TYPES: dict[type[BaseModel], Contract] = {c.payload_model: c for c in CONTRACTS.values()}

PAST_CONTRACTS: dict[tuple[str, int], Contract] = {
    (c.event_type, c.major): c for c in (Contract("EvaluationReported", "1.0", EvaluationReportedV1),)
}
"""(event type, major) -> the last contract of a major that is no longer written."""


def topic_of(event_type: str, major: int) -> str:
    kebab = re.sub(r"(?<!^)(?=[A-Z])", "-", event_type).lower()
    return f"modelguard.{kebab}.v{major}"


class UnknownEventType(ValueError):
    pass


def contract_for(event_type: str) -> Contract:
    try:
        return CONTRACTS[event_type]
    except KeyError:
        raise UnknownEventType(f"unknown event type {event_type!r}") from None


def contract_of_payload(payload: BaseModel) -> Contract:
    try:
        return PAYLOAD_TYPES[type(payload)]
    except KeyError:
        raise UnknownEventType(f"{type(payload).__name__} is not a registered event payload") from None


def all_topics() -> list[str]:
    return sorted({t for c in CONTRACTS.values() for t in c.topics} | {DEAD_LETTER_TOPIC})


def written_contract(event_type: str, event_version: str) -> Contract:
    """The contract an event of ``event_version`` was written to: today's, or a past major's."""
    contract = contract_for(event_type)
    major = int(event_version.split(".")[0])
    if major == contract.major:
        return contract
    past = PAST_CONTRACTS.get((event_type, major))
    if past is None:
        raise UnknownEventType(f"{event_type} v{event_version} has no contract (have v{contract.version})")
    return past


def contract_of_document(document: dict[str, Any]) -> Contract:
    """The contract an event document's metadata names, checking the major version: today's or a past one."""
    meta = EventMeta.model_validate(document.get("meta"), extra="ignore")  # the event's own validation is exact
    return written_contract(meta.event_type, meta.event_version)


def minor_difference(event_version: str, contract: Contract) -> int:
    """How many minors the event is ahead of (positive) or behind (negative) the reader's contract."""
    return int(event_version.split(".")[1]) - int(contract.version.split(".")[1])


def parse_written(document: dict[str, Any], raw: bytes | None = None) -> Event[Any]:
    """Validate an event against the contract it was written to (today's or a past major's), as written.

    An event of a newer minor is read tolerantly: the optional fields the reader does not know are ignored
    (everywhere in the event, nested models too). Pass the raw JSON too when there is one: models that are
    strict about tuples accept JSON arrays only in JSON mode, and it is faster.
    """
    contract = contract_of_document(document)
    newer = minor_difference(document["meta"]["event_version"], contract) > 0  # checked by contract_of_document
    extra: Literal["ignore"] | None = "ignore" if newer else None
    if raw is not None:
        return contract.event_model.model_validate_json(raw, extra=extra)
    return contract.event_model.model_validate(document, extra=extra)


def upcast(event: Event[Any]) -> Event[Any]:
    """``event`` with its payload in today's contract: a past major's is carried forward by the upcasters; its
    metadata (and so its version) stays what the writer signed. Raises ``contracts.upcasting.UpcastRefused``."""
    meta = event.meta
    contract = contract_for(meta.event_type)
    written = written_contract(meta.event_type, meta.event_version)
    if written.major == contract.major:
        return event
    payload = upcast_payload(meta.event_type, written.major, contract.major, event.payload.model_dump(mode="json"))
    return contract.event_model(meta=meta, payload=contract.payload_model.model_validate(payload))


def parse_event(document: dict[str, Any], raw: bytes | None = None) -> Event[Any]:
    """The event in today's contract: validated as written (``parse_written``), then upcast."""
    return upcast(parse_written(document, raw))
