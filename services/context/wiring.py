"""Wiring of the context service: DataHub context for each detected regression, and upstream risks from
DataHub's MetadataChangeLog topics through a persistent metadata mirror."""

from __future__ import annotations

import os
from pathlib import Path

from contracts.service_channels import SERVICE_CHANNELS
from libs.bus.external_input import ExternalInput
from libs.bus.handler_errors import RejectedInput, TransientFailure
from libs.bus.runtime import ServiceDefinition
from libs.datahub.change_records import ChangeRecordsError, read_change_records
from libs.datahub.mcl.decoder import MclDecoder
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_bootstrap import bootstrap_from_files
from libs.datahub.mcl.mirror_store import MirrorStore, MirrorWrite
from libs.datahub.mcl.mirror_store_choice import open_mirror_store
from libs.datahub.mcl.registry_auth import RegistryAuthError, registry_auth_for
from libs.datahub.mcl.schema_registry import schema_resolver_for
from libs.datahub.mcp_file import MetadataFileError
from libs.datahub.provider_choice import context_provider_from
from libs.datahub.sdk_errors import ContextUnavailable
from libs.events.codec import SignedEvent
from libs.settings import Settings, SettingsError
from libs.signing.keys import SigningKey
from libs.version import MODELGUARD_VERSION
from services.context.change_log import OLD_LOG_FILE_NAME, ChangeLog, import_old_log
from services.context.handler import context_for_regression
from services.context.intake_counts import IntakeCounts
from services.context.mcl_intake import MclIntake
from services.context.mcl_metrics import MclRecordsCollector
from services.context.upstream_risk_dedup import RiskDeduplicator

NAME = "context"
OLD_SEEN_FILE_NAME = "upstream-risks.sqlite"


def open_mirror(settings: Settings) -> MetadataMirror:
    """The mirror persists across restarts (SQLite in the state folder, or PostgreSQL at ``MODELGUARD_STATE_URL``);
    on first start it is bootstrapped from the provider's files."""
    state = settings.state_dir(NAME)
    state.mkdir(parents=True, exist_ok=True)
    store = open_mirror_store(settings.state_url, state)
    if not store.shared:
        _carry_over_older_files(state, store)
    mirror = MetadataMirror(store)
    if mirror.needs_bootstrap and settings.datahub_files:
        try:
            bootstrap_from_files(mirror, settings.datahub_files, settings.datahub_root)
        except MetadataFileError as exc:
            raise SettingsError(f"cannot bootstrap the metadata mirror: {exc}") from None
    return mirror


def _carry_over_older_files(state: Path, store: MirrorStore) -> None:
    """The change log and the reported risks lived in files of their own before they moved into the store."""
    import_old_log(state / OLD_LOG_FILE_NAME, store)
    seen_file = state / OLD_SEEN_FILE_NAME
    if seen_file.is_file():
        old = RiskDeduplicator.open(seen_file)
        store.write(MirrorWrite(seen_fingerprints=old.fingerprints()))
        old.close()
        seen_file.rename(seen_file.with_name(seen_file.name + ".imported"))


def definition(settings: Settings, key: SigningKey) -> ServiceDefinition:
    provider = context_provider_from(settings)
    try:
        file_changes = [
            record
            for path in settings.datahub_change_files
            for record in read_change_records(path, settings.datahub_root)
        ]
    except ChangeRecordsError as exc:
        raise SettingsError(str(exc)) from exc
    try:
        registry_auth = registry_auth_for(os.environ, settings.schema_registry_url)
    except RegistryAuthError as exc:
        raise SettingsError(str(exc)) from None
    mirror = open_mirror(settings)
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

    intake = MclIntake(
        MclDecoder(schema_resolver_for(settings.schema_registry_url, headers=registry_auth.headers())), mirror
    )
    mcl = ExternalInput(
        "datahub-mcl",
        settings.mcl_topics,
        handle=intake,
        settled=intake.settle,
        stored_offsets=intake.stored_offsets,
        handle_batch=intake.handle_batch,
        settle_batch=intake.settle_batch,
        batch_max_records=settings.mcl_batch_max_records,
    )
    return ServiceDefinition(
        NAME,
        MODELGUARD_VERSION,
        SERVICE_CHANNELS[NAME],
        handler=handle,
        external=(mcl,),
        collectors=(MclRecordsCollector(lambda: IntakeCounts.from_counters(mirror.store.counters())),),
    )
