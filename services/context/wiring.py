"""Wiring of the context service: DataHub context for each detected regression, and upstream risks from
DataHub's MetadataChangeLog topics through a persistent metadata mirror."""

from __future__ import annotations

import os

from libs.bus.external_input import ExternalInput
from libs.bus.runtime import RejectedInput, ServiceDefinition, TransientFailure
from libs.datahub.change_records import ChangeRecordsError, read_change_records
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.registry_auth import RegistryAuthError, registry_auth_for
from libs.datahub.mcl.schema_registry import schema_resolver_for
from libs.datahub.mcp_file import MetadataFileError, load_mcp_file
from libs.datahub.provider_choice import context_provider_from
from libs.datahub.sdk_errors import ContextUnavailable
from libs.events.codec import SignedEvent
from libs.settings import Settings, SettingsError
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.context.change_log import ChangeLog
from services.context.handler import context_for_regression
from services.context.mcl_intake import MclIntake
from services.context.mcl_metrics import MclRecordsCollector
from services.context.upstream_risk_dedup import RiskDeduplicator

NAME = "context"


def open_mirror(settings: Settings) -> MetadataMirror:
    """The mirror persists across restarts; on first start it is bootstrapped from the provider's files."""
    state = settings.state_dir(NAME)
    state.mkdir(parents=True, exist_ok=True)
    mirror = MetadataMirror.open(state / "mirror.sqlite")
    if mirror.needs_bootstrap and settings.datahub_files:
        records = [record for path in settings.datahub_files for record in load_mcp_file(path).records]
        mirror.bootstrap(records, source="file:" + ",".join(str(p) for p in settings.datahub_files))
        mirror.flush()
    return mirror


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    provider = context_provider_from(settings)
    try:
        file_changes = [record for path in settings.datahub_change_files for record in read_change_records(path)]
    except ChangeRecordsError as exc:
        raise SettingsError(str(exc)) from exc
    change_log = ChangeLog.open(settings.state_dir(NAME) / "changes.sqlite")

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

    try:
        registry_auth = registry_auth_for(os.environ, settings.schema_registry_url)
    except RegistryAuthError as exc:
        raise SettingsError(str(exc)) from None
    intake = MclIntake(
        MclDecoder(schema_resolver_for(settings.schema_registry_url, headers=registry_auth.headers())),
        open_mirror(settings),
        RiskDeduplicator.open(settings.state_dir(NAME) / "upstream-risks.sqlite"),
        change_log,
    )
    mcl = ExternalInput(
        "datahub-mcl", settings.mcl_topics, handle=intake, settled=intake.settle, stored_offsets=intake.stored_offsets
    )
    return ServiceDefinition(
        NAME,
        MODELGUARD_VERSION,
        ("RegressionDetected",),
        handler=handle,
        external=(mcl,),
        collectors=(MclRecordsCollector(lambda: intake.counts),),
    )
