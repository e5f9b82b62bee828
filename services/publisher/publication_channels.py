"""Which GitHub and DataHub the publisher talks to, from settings and the environment.

- fixture mode (the default): files under `publish_dir` stand in for both;
- live mode: GitHub's REST API (`MODELGUARD_GITHUB_API_URL`) with `GITHUB_TOKEN` or a GitHub App, and DataHub
  GMS (`DATAHUB_GMS_URL`, `DATAHUB_GMS_TOKEN`). Reads always go to the remote; writes only for the channels named
  in `MODELGUARD_PUBLISH_APPLY`, otherwise they are kept as files under `publish_dir/dry-run/` (dry run).
- notifications, in either mode, when configured: a Slack incoming webhook (`MODELGUARD_SLACK_WEBHOOK_URL` or
  `…_FILE`) and a signed webhook (`MODELGUARD_WEBHOOK_URL` with `MODELGUARD_WEBHOOK_SECRET` or `…_FILE`), sent
  only in live mode with `slack` / `webhook` in `MODELGUARD_PUBLISH_APPLY`, else written under
  `publish_dir/dry-run/notifications/`.
Tokens, webhook URLs and secrets are read here from the environment and handed to the clients; they are not kept
in settings.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from datahub.ingestion.graph.client import DatahubClientConfig, DataHubGraph

from libs.settings import PublishingSettings, Settings, SettingsError
from libs.state.open_state import state_database
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
from services.publisher.notification_channels import (
    NotificationSender,
    RecordedNotification,
    SignedWebhook,
    SlackWebhook,
    host_of,
)
from services.publisher.notification_log import NotificationLog
from services.publisher.notifier import Notifier
from services.publisher.secret_redaction import SecretRedactor


@dataclass(frozen=True)
class PublicationChannels:
    github: GitHubChannel
    datahub: DataHubChannel
    redactor: SecretRedactor = field(default_factory=SecretRedactor)
    notifier: Notifier | None = None


MIN_WEBHOOK_SECRET = 16
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")  # plain http only to this machine (a local relay, tests)


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


def _secret(env: Mapping[str, str], name: str) -> str | None:
    """``name`` from the environment, or the contents of the file ``name_FILE`` names (a mounted Secret)."""
    if value := env.get(name, "").strip():
        return value
    if path := env.get(f"{name}_FILE", "").strip():
        try:
            return Path(path).read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise SettingsError(f"{name}_FILE: cannot read {path}: {exc.strerror or exc}") from None
    return None


def notifier(
    settings: Settings, env: Mapping[str, str], redactor: SecretRedactor, options: LiveOptions
) -> Notifier | None:
    slack_url = _secret(env, "MODELGUARD_SLACK_WEBHOOK_URL")
    webhook_url = env.get("MODELGUARD_WEBHOOK_URL", "").strip() or None
    if slack_url is None and webhook_url is None:
        return None
    planned = settings.publish_dir / "dry-run" / "notifications"
    client = options.http_client or httpx.Client(timeout=options.datahub_timeout_s)
    senders: list[NotificationSender] = []
    if slack_url is not None:
        if not slack_url.startswith("https://") and host_of(slack_url) not in LOOPBACK_HOSTS:
            raise SettingsError("MODELGUARD_SLACK_WEBHOOK_URL must be an https:// incoming webhook URL")
        applied = settings.publishing.applies("slack")
        redactor.add(slack_url)
        senders.append(
            SlackWebhook(slack_url, client, redactor)
            if applied
            else RecordedNotification("slack", host_of(slack_url), planned)
        )
    if webhook_url is not None:
        secret = _secret(env, "MODELGUARD_WEBHOOK_SECRET")
        if secret is None or len(secret) < MIN_WEBHOOK_SECRET:
            raise SettingsError(
                f"MODELGUARD_WEBHOOK_URL needs MODELGUARD_WEBHOOK_SECRET (or …_FILE) of at least {MIN_WEBHOOK_SECRET} "
                "characters: every request is signed with it"
            )
        applied = settings.publishing.applies("webhook")
        senders.append(
            SignedWebhook(webhook_url, secret, client, redactor, options.clock)
            if applied
            else RecordedNotification("webhook", host_of(webhook_url), planned)
        )
    return Notifier(senders, NotificationLog.of(state_database(settings)))


def publication_channels(
    settings: Settings, env: Mapping[str, str] | None = None, options: LiveOptions | None = None
) -> PublicationChannels:
    environment = os.environ if env is None else env
    live = options or LiveOptions()
    redactor = SecretRedactor()
    notify = notifier(settings, environment, redactor, live)
    if settings.publishing.mode == "fixture":
        return PublicationChannels(
            FixtureGitHub(settings.publish_dir), fixture_datahub(settings.publish_dir), redactor, notify
        )
    return PublicationChannels(
        live_github(settings, environment, redactor, live),
        live_datahub(settings, environment, redactor, live),
        redactor,
        notify,
    )
