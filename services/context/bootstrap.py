"""The context service's composition root: the production ports from Settings and the schema registry's
credentials (used by ``main.py`` and the CLI's in-process stack, nothing else)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from libs.bus.runtime import ServiceDefinition
from libs.datahub.change_records import ChangeRecordsError, read_change_records
from libs.datahub.file_provider import FileContextProvider
from libs.datahub.mcl.mirror import MetadataMirror
from libs.datahub.mcl.mirror_bootstrap import bootstrap_from_files
from libs.datahub.mcl.mirror_store import MirrorStore, MirrorWrite
from libs.datahub.mcl.mirror_store_choice import open_mirror_store
from libs.datahub.mcl.registry_auth import RegistryAuthError, registry_auth_for
from libs.datahub.mcl.schema_registry import schema_resolver_for
from libs.datahub.mcp_file import MetadataFileError
from libs.datahub.provider_choice import context_provider_from
from libs.settings import Settings, SettingsError
from libs.signing.keys import SigningKey
from services.context.change_log import OLD_LOG_FILE_NAME, import_old_log
from services.context.upstream_risk_dedup import RiskDeduplicator
from services.context.wiring import NAME, ContextPorts, definition

log = logging.getLogger("modelguard.context")

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


def production_ports(settings: Settings, secrets: Mapping[str, str] = os.environ) -> ContextPorts:
    """``secrets``: where the DataHub tokens and the schema registry's credentials are read (the process
    environment); they reach the clients that need them and nothing else."""
    provider = context_provider_from(settings, secrets)
    if isinstance(provider, FileContextProvider):  # decoded now, not at the first incident
        for problem in provider.warm():
            log.warning("context: %s (reported with each incident until the file is fixed)", problem)
    try:
        file_changes = tuple(
            record
            for path in settings.datahub_change_files
            for record in read_change_records(path, settings.datahub_root)
        )
    except ChangeRecordsError as exc:
        raise SettingsError(str(exc)) from exc
    try:
        registry_auth = registry_auth_for(secrets, settings.schema_registry_url)
    except RegistryAuthError as exc:
        raise SettingsError(str(exc)) from None
    return ContextPorts(
        provider=provider,
        mirror=open_mirror(settings),
        schemas=schema_resolver_for(settings.schema_registry_url, headers=registry_auth.headers()),
        file_changes=file_changes,
        mcl_topics=settings.mcl_topics,
        mcl_batch_max_records=settings.mcl_batch_max_records,
    )


def bootstrap(settings: Settings, key: SigningKey) -> ServiceDefinition:
    """The service as its process runs it (``serve``'s builder): the production ports, wired."""
    return definition(production_ports(settings))
