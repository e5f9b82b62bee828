"""Entrypoint of the publisher service (fixture mode: files stand in for GitHub and DataHub)."""

from __future__ import annotations

from libs.bus.runtime import ServiceDefinition, run_service, service_key
from libs.events.codec import SignedEvent
from libs.settings import load_settings
from libs.version import MODELGUARD_VERSION
from services.publisher.fixture_channels import FixtureDataHub, FixtureGitHub
from services.publisher.handler import publish

NAME = "publisher"
CONSUMES = ("RepairValidated", "ValidationFailed", "RepairWithheld", "UpstreamRiskDetected")


def main() -> None:
    settings = load_settings()
    key, registry = service_key(settings, NAME)
    github, datahub = FixtureGitHub(settings.publish_dir), FixtureDataHub(settings.publish_dir)

    def handle(signed: SignedEvent) -> list:
        meta = signed.event.meta
        at_ms = int(meta.occurred_at.timestamp() * 1000)
        return [publish(meta.incident_id, meta.event_type, signed.event.payload, github, datahub, at_ms)]

    run_service(ServiceDefinition(NAME, MODELGUARD_VERSION, CONSUMES, handler=handle), settings, key, registry)


if __name__ == "__main__":
    main()
