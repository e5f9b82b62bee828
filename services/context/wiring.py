"""Wiring of the context service: DataHub context for each detected regression."""

from __future__ import annotations

from libs.bus.runtime import RejectedInput, ServiceDefinition
from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcp_file import MetadataFileError
from libs.events.codec import SignedEvent
from libs.settings import Settings
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.context.handler import context_for_regression

NAME = "context"


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    provider = FileContextProvider(settings.datahub_files)

    def handle(signed: SignedEvent) -> list:
        # the request's time, so the same input always yields the same snapshot digest
        fetched_at = signed.event.meta.occurred_at.isoformat()
        try:
            return [context_for_regression(signed.event.payload, provider, fetched_at)]
        except MetadataFileError as exc:
            raise RejectedInput("metadata-unreadable", str(exc)) from exc
        except ValueError as exc:
            raise RejectedInput("context-unavailable", str(exc)) from exc

    return ServiceDefinition(NAME, MODELGUARD_VERSION, ("RegressionDetected",), handler=handle)
