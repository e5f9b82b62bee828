"""Which GitHub and DataHub the publisher talks to, from settings and the environment.

- fixture mode (the default): files under `publish_dir` stand in for both;
- live mode: GitHub's REST API (`MODELGUARD_GITHUB_API_URL`) with `GITHUB_TOKEN` or a GitHub App, and DataHub
  GMS (`DATAHUB_GMS_URL`, `DATAHUB_GMS_TOKEN`). Reads always go to the remote; writes only for the channels named
  in `MODELGUARD_PUBLISH_APPLY`, otherwise they are kept as files under `publish_dir/dry-run/` (dry run).
Tokens are read here from the environment and handed to the clients; they are not kept in settings.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import httpx
from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph

from libs.settings import PublishingSettings, Settings, SettingsError
from services.publisher.datahub_channel import DataHubIncidents
from services.publisher.datahub_incident_store import FileIncidentStore, GmsIncidentStore, SplitIncidentStore
from services.publisher.fixture_channels import FixtureGitHub, fixture_datahub
from services.publisher.github_api import GitHubApi
from services.publisher.github_auth import (
    AnonymousAccess,
    AppInstallationToken,
    GitHubCredentials,
    StaticToken,
    load_app_private_key,
)
from services.publisher.github_channel import LiveGitHub
from services.publisher.github_dry_run import RecordedWrites
from services.publisher.github_http import GitHubHttp
from services.publisher.github_retry import RetryPolicy
from services.publisher.handler import DataHubChannel, GitHubChannel
from services.publisher.secret_redaction import SecretRedactor


@dataclass(frozen=True)
class PublicationChannels:
    github: GitHubChannel
    datahub: DataHubChannel
    redactor: SecretRedactor = field(default_factory=SecretRedactor)


@dataclass(frozen=True)
class LiveOptions:
    """What tests inject: no real sleeping, a fixed clock, a smaller retry budget for DataHub's SDK."""

    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.time
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    datahub_retries: int = 3
    datahub_timeout_s: float = 30.0
    http_client: httpx.Client | None = None


def github_credentials(
    publishing: PublishingSettings, env: Mapping[str, str], redactor: SecretRedactor, clock: Callable[[], float]
) -> GitHubCredentials:
    if publishing.github_app_id:
        if publishing.github_app_private_key_file is None or publishing.github_app_installation_id is None:
            raise SettingsError(
                "MODELGUARD_GITHUB_APP_ID needs MODELGUARD_GITHUB_APP_PRIVATE_KEY_FILE and "
                "MODELGUARD_GITHUB_APP_INSTALLATION_ID"
            )
        key = load_app_private_key(publishing.github_app_private_key_file)
        return AppInstallationToken(
            publishing.github_app_id, key, publishing.github_app_installation_id, redactor, clock
        )
    if token := env.get("GITHUB_TOKEN"):
        return StaticToken(token, redactor)
    if publishing.applies("github"):
        raise SettingsError("publishing to GitHub needs GITHUB_TOKEN or a GitHub App (MODELGUARD_GITHUB_APP_ID)")
    return AnonymousAccess()  # a dry run can still read public repositories


def live_github(
    settings: Settings, env: Mapping[str, str], redactor: SecretRedactor, options: LiveOptions
) -> LiveGitHub:
    publishing = settings.publishing
    credentials = github_credentials(publishing, env, redactor, options.clock)
    http = GitHubHttp(
        publishing.github_api_url,
        credentials,
        redactor,
        retry=options.retry,
        sleep=options.sleep,
        clock=options.clock,
        client=options.http_client,
    )
    api = GitHubApi(http)
    writes = api if publishing.applies("github") else RecordedWrites(settings.publish_dir / "dry-run" / "github")
    return LiveGitHub(api, writes, options.retry, options.sleep)


def live_datahub(
    settings: Settings, env: Mapping[str, str], redactor: SecretRedactor, options: LiveOptions
) -> DataHubIncidents:
    publishing = settings.publishing
    if not publishing.datahub_gms_url:
        raise SettingsError("live publishing to DataHub needs DATAHUB_GMS_URL")
    token = env.get("DATAHUB_GMS_TOKEN") or None
    redactor.add(token)
    config = DatahubClientConfig(
        server=publishing.datahub_gms_url,
        token=token,
        timeout_sec=options.datahub_timeout_s,
        retry_max_times=options.datahub_retries,
        openapi_ingestion=False,  # Rest.li ingestProposal: answered by every GMS version
    )
    gms = GmsIncidentStore(DataHubGraph(config), redactor)
    if publishing.applies("datahub"):
        return DataHubIncidents(gms, dry_run=False)
    dry_run_files = FileIncidentStore(settings.publish_dir / "dry-run" / "datahub")
    return DataHubIncidents(SplitIncidentStore(reads=gms, writes=dry_run_files), dry_run=True)


def publication_channels(
    settings: Settings, env: Mapping[str, str] | None = None, options: LiveOptions | None = None
) -> PublicationChannels:
    if settings.publishing.mode == "fixture":
        return PublicationChannels(FixtureGitHub(settings.publish_dir), fixture_datahub(settings.publish_dir))
    environment = os.environ if env is None else env
    live = options or LiveOptions()
    redactor = SecretRedactor()
    return PublicationChannels(
        live_github(settings, environment, redactor, live),
        live_datahub(settings, environment, redactor, live),
        redactor,
    )
