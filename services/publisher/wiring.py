"""Wiring of the publisher service (fixture mode: files stand in for GitHub and DataHub)."""

from __future__ import annotations

from libs.bus.runtime import ServiceDefinition
from libs.events.codec import SignedEvent
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.publisher.fixture_channels import FixtureDataHub, FixtureGitHub
from services.publisher.handler import publish

NAME = "publisher"
CONSUMES = ("RepairValidated", "ValidationFailed", "RepairWithheld", "UpstreamRiskDetected")


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    github, datahub = FixtureGitHub(settings.publish_dir), FixtureDataHub(settings.publish_dir)

    def handle(signed: SignedEvent) -> list:
        meta = signed.event.meta
        at_ms = int(meta.occurred_at.timestamp() * 1000)
        return [publish(meta.incident_id, meta.event_type, signed.event.payload, github, datahub, at_ms)]

    return ServiceDefinition(NAME, MODELGUARD_VERSION, CONSUMES, handler=handle)
