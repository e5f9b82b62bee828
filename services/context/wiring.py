"""Wiring of the context service: DataHub context for each detected regression, and upstream risks from
DataHub's MetadataChangeLog topics through a persistent metadata mirror.

``definition`` wires the handler and the MCL intake to their ports only; ``services/context/bootstrap.py`` builds
the production ports from Settings (the composition root)."""

from __future__ import annotations

from dataclasses import dataclass

from contracts.context_snapshot import MetadataChange
from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.external_input import ExternalInput
from libs.bus.handler_errors import RejectedInput, TransientFailure
from libs.bus.runtime import ServiceDefinition
from libs.clock import Clock, utc_now
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.schema_registry import SchemaResolver
from libs.datahub.mcp_file import MetadataFileError
from libs.datahub.provider import ContextProvider
from libs.datahub.sdk_errors import ContextUnavailable
from libs.events.codec import SignedEvent
from libs.version import MODELGUARD_VERSION
from services.context.change_log import ChangeLog
from services.context.handler import context_for_regression
from services.context.intake_counts import IntakeCounts
from services.context.mcl_intake import MclIntake
from services.context.mcl_metrics import MclRecordsCollector

NAME = "context"
DEFAULT_MCL_TOPICS = ("MetadataChangeLog_Versioned_v1", "MetadataChangeLog_Timeseries_v1")


@dataclass(frozen=True)
class ContextPorts:
    """What the context service reads: DataHub (the provider of each model's context), the metadata mirror the MCL
    intake keeps (and the change log in its store), the schema registry the MCL records are decoded with, the
    metadata changes given as files, which MCL topics it reads and how many records a batch holds, and the clock
    its events are stamped with."""

    provider: ContextProvider
    mirror: MetadataMirror
    schemas: SchemaResolver
    file_changes: tuple[MetadataChange, ...] = ()
    mcl_topics: tuple[str, ...] = DEFAULT_MCL_TOPICS
    mcl_batch_max_records: int = 2000
    clock: Clock = utc_now


def definition(ports: ContextPorts) -> ServiceDefinition:
    provider, mirror, file_changes = ports.provider, ports.mirror, ports.file_changes
    change_log = ChangeLog(mirror.store)

    def handle(signed: SignedEvent) -> list:
        # the request's time, so the same input always yields the same snapshot digest
        fetched_at = signed.event.meta.occurred_at.isoformat()
        try:
            changes = [*file_changes, *change_log.recent()]
            return [context_for_regression(signed.event.payload, provider, fetched_at, changes)]
        except MetadataFileError as exc:
            raise RejectedInput("metadata-unreadable", str(exc)) from exc
        except ContextUnavailable as exc:  # DataHub is away: retry, the regression is not lost
            raise TransientFailure(str(exc)) from exc
        except ValueError as exc:
            raise RejectedInput("context-unavailable", str(exc)) from exc

    intake = MclIntake(MclDecoder(ports.schemas), mirror)
    mcl = ExternalInput(
        "datahub-mcl",
        ports.mcl_topics,
        handle=intake,
        settled=intake.settle,
        stored_offsets=intake.stored_offsets,
        handle_batch=intake.handle_batch,
        settle_batch=intake.settle_batch,
        batch_max_records=ports.mcl_batch_max_records,
        settle_behind=intake.settle_behind(),
    )
    return ServiceDefinition(
        NAME,
        MODELGUARD_VERSION,
        SERVICE_CHANNELS[NAME],
        handler=handle,
        external=(mcl,),
        collectors=(MclRecordsCollector(lambda: IntakeCounts.from_counters(mirror.store.counters())),),
        clock=ports.clock,
    )
