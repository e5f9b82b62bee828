"""Settings from the environment, parsed once when a process starts (``load_settings``): the only module of
libs/, services/ and modelguard/ that reads ModelGuard's settings from the environment
(``tests/unit/settings/test_environment_reads.py`` names the few others, each with its reason). Sections of their
own: observability (``libs/observability/settings.py``), the detector's ingestion endpoint
(``libs/ingest_settings.py``), the context service's DataHub (``libs/datahub/provider_settings.py``).

Secrets are read by the code that needs them, from a secrets mapping its composition root hands in, never stored
here, except the Kafka connections' SASL passwords, which the connections need to connect and keep out of
``repr``."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from libs.bus.kafka_connection import (
    BUS_PREFIX,
    KafkaConnection,
    KafkaConnectionError,
    datahub_connection_from,
    kafka_connection_from,
)
from libs.bus.start_policy import LATEST, StartPolicy, StartPolicyError, parse_start_policy
from libs.datahub.provider_settings import ContextProviderSettings, context_provider_settings_from
from libs.ingest_settings import IngestSettings, ingest_settings_from
from libs.observability.settings import (
    HealthSettings,
    LoggingSettings,
    TelemetrySettings,
    health_settings_from,
    logging_settings_from,
    telemetry_settings_from,
)
from libs.s3_location import (
    ARTIFACTS_URL_ENV,
    S3_ENDPOINT_ENV,
    ArtifactsUrlError,
    credential_files,
    s3_location_from,
)
from libs.settings_error import SettingsError as SettingsError
from libs.state.location import StateUrlError, state_url_from

FETCH_MAX_WAIT_ENV = "MODELGUARD_KAFKA_FETCH_MAX_WAIT_MS"
DOORBELLS_ENV = "MODELGUARD_BUS_DOORBELLS"
SCRATCH_DIR_ENV = "MODELGUARD_SCRATCH_DIR"
EMBEDDED_FETCH_MAX_WAIT_MS = 100
"""The services' fetch wait on the embedded broker (Tansu holds a fetch to its end even when a record arrives): a
record then waits 15 ms p50, 66 ms p95 before its consumer has it (500 ms: 215 and 466; 50 ms: 3 and 16), and each
idle consumer costs the broker 1.2 % of a core and itself 0.8 %. 50 ms cost the broker 4.6 CPU-s in the ten-incident
bench against 3.0 at 100 and 1.8 at 500, CPU the workspace commands then lacked on two cores."""


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None


def _fetch_wait_ms() -> int:
    wait_ms = _int(FETCH_MAX_WAIT_ENV, 500)
    if not 1 <= wait_ms <= 60_000:
        raise SettingsError(f"{FETCH_MAX_WAIT_ENV} must be between 1 and 60000 (milliseconds), got {wait_ms}")
    return wait_ms


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, got {raw!r}")


PUBLISH_MODES = ("fixture", "live")
PUBLISH_CHANNELS = ("github", "datahub", "slack", "webhook")


@dataclass(frozen=True)
class PublishingSettings:
    """How the publisher reaches people. Fixture mode (files only) is the default; live mode talks to GitHub and
    DataHub GMS but only writes to the channels named in `apply` (dry run otherwise). Tokens (`GITHUB_TOKEN`,
    `DATAHUB_GMS_TOKEN`) and the App's private key are read by the publisher when it needs them, never stored here."""

    mode: str = "fixture"
    apply: frozenset[str] = frozenset()
    github_api_url: str = "https://api.github.com"
    github_app_id: str | None = None
    github_app_private_key_file: Path | None = None
    github_app_installation_id: int | None = None
    datahub_gms_url: str | None = None

    def applies(self, channel: str) -> bool:
        return self.mode == "live" and channel in self.apply


RUNNER_SCHEMES = ("http", "https")
LOCAL_RUNNER = "local"


@dataclass(frozen=True)
class RunnerSettings:
    """Where workspace commands run (docs/deploy.md, "The workspace runner").

    Caller side: ``url`` is the workspace runner's address (``MODELGUARD_RUNNER``, ``http://host:port``); None
    (unset, empty or ``local``) runs them in this process's own sandbox. ``answer_margin_s`` is how much longer
    than the command's wall-time limit and its wait for a free slot a caller waits for the runner's answer (the
    transfers and the runner's set-up). Runner side (``services/runner``): the address it listens on and how many
    commands it runs at once."""

    url: str | None = None
    answer_margin_s: float = 60.0
    host: str = "0.0.0.0"
    port: int = 8090
    concurrency: int = 2
    health: HealthSettings = field(default_factory=HealthSettings)
    """The runner's own probe server (``MODELGUARD_HEALTH_PORT``), as every service's."""
    logging: LoggingSettings = field(default_factory=LoggingSettings)


def _runner_url(raw: str) -> str | None:
    raw = raw.strip()
    if raw in ("", LOCAL_RUNNER):
        return None
    parts = urlsplit(raw)
    try:
        port = parts.port
    except ValueError:
        port = -1
    if parts.scheme not in RUNNER_SCHEMES or not parts.hostname or port == -1 or parts.query or parts.fragment:
        raise SettingsError(
            f"MODELGUARD_RUNNER must be {LOCAL_RUNNER!r} or the workspace runner's http://host:port, got {raw!r}"
        )
    return raw.rstrip("/")


def load_runner_settings() -> RunnerSettings:
    margin = _float("MODELGUARD_RUNNER_MARGIN_S", 60.0)
    port = _int("MODELGUARD_RUNNER_PORT", 8090)
    concurrency = _int("MODELGUARD_RUNNER_CONCURRENCY", 2)
    if not margin > 0:
        raise SettingsError(f"MODELGUARD_RUNNER_MARGIN_S must be positive, got {margin}")
    if not 0 <= port < 65536:
        raise SettingsError(f"MODELGUARD_RUNNER_PORT must be a TCP port number (0: any free one), got {port}")
    if concurrency < 1:
        raise SettingsError(f"MODELGUARD_RUNNER_CONCURRENCY must be at least 1, got {concurrency}")
    return RunnerSettings(
        url=_runner_url(os.environ.get("MODELGUARD_RUNNER", "")),
        answer_margin_s=margin,
        host=os.environ.get("MODELGUARD_RUNNER_HOST", "").strip() or "0.0.0.0",
        port=port,
        concurrency=concurrency,
        health=health_settings_from(os.environ),
        logging=logging_settings_from(os.environ),
    )


@dataclass(frozen=True)
class Settings:
    home: Path
    kafka: KafkaConnection
    """ModelGuard's own bus (``MODELGUARD_KAFKA_*``, ``libs/bus/kafka_connection.py``)."""
    kafka_idempotence: bool
    kafka_session_timeout_ms: int
    kafka_partitions: int
    ledger_url: str
    artifacts_dir: Path
    keys_dir: Path
    policy_dir: Path
    datahub_files: tuple[Path, ...]
    publish_dir: Path
    trace_file: Path | None
    schema_registry_url: str | None = None
    scratch_root: Path | None = None
    """``MODELGUARD_SCRATCH_DIR``: the folder under which each service lays out incidents' workspaces and its commands'
    temporary files (None: under each service's state folder). Nothing there outlives the step that made it, so a
    memory filesystem suits it: the local stack picks one when it can (``modelguard/memory_scratch.py``)."""
    datahub_change_files: tuple[Path, ...] = ()
    central_policy: Path | None = None
    mcl_topics: tuple[str, ...] = ("MetadataChangeLog_Versioned_v1", "MetadataChangeLog_Timeseries_v1")
    kafka_fetch_max_wait_ms: int = 500
    """How long the broker may hold a service's fetch of its input topics when nothing is there
    (``MODELGUARD_KAFKA_FETCH_MAX_WAIT_MS``). Kafka answers a waiting fetch as soon as a record arrives, so its default,
    500, costs no latency there; the embedded broker answers one that found nothing only when its wait ends
    (``modelguard/bus_hop_probe.py``), so the stack gives its services a shorter one (``modelguard/stack.py``), which
    with doorbells (``bus_doorbells``) is the longest a consumer holds a fetch for a ring."""
    bus_doorbells: Path | None = None
    """Where the readers of each topic register their doorbells (``MODELGUARD_BUS_DOORBELLS``): set by the stack for
    the services on a broker it owns: Tansu never answers a waiting fetch early (``libs/bus/doorbell.py``).
    Unset (Kafka), the services fetch with ``kafka_fetch_max_wait_ms`` and ring nothing."""
    publishing: PublishingSettings = field(default_factory=PublishingSettings)
    ledger_checkpoint_interval_s: float = 10.0
    """Events older than this and under no checkpoint get one sealed by the ledger service's timer."""
    ledger_head_log: Path | None = None
    """An append-only JSON-lines file (a WORM mount, say) that receives every sealed checkpoint."""
    mcl_start: StartPolicy = LATEST
    """Where DataHub's MCL consumer starts on a partition it never read (``libs/bus/start_policy.py``)."""
    stuck_after_s: float = 900.0
    """An unfinished incident whose last event is older than this counts as stuck (``modelguard_incidents_stuck``)."""
    datahub_kafka: KafkaConnection | None = None
    """DataHub's Kafka, where the MCL topics are (``MODELGUARD_DATAHUB_KAFKA_*``); None: the bus."""
    state_url: str | None = None
    """The services' small state in PostgreSQL (``MODELGUARD_STATE_URL``, default: a PostgreSQL ledger's URL);
    None: SQLite files in each service's state folder (``libs/state``)."""
    artifacts_url: str | None = None
    """Object storage for artifacts (``MODELGUARD_ARTIFACTS_URL``, ``s3://bucket/prefix``); None: ``artifacts_dir``."""
    s3_endpoint_url: str | None = None
    """A non-AWS S3 endpoint (``MODELGUARD_S3_ENDPOINT_URL``: MinIO, Ceph, moto)."""
    s3_credential_files: tuple[Path, ...] = ()
    """Files the object store's credentials are read from (``AWS_*_FILE``): secrets no sandboxed command reads."""
    claim_lease_s: float = 30.0
    """How long a replica's claim on an input holds without renewal (``MODELGUARD_CLAIM_LEASE_S``): a replica that
    dies mid-input leaves it to another after this (``libs/bus/processed_inputs.py``)."""
    processed_outputs_keep_s: float = 14 * 24 * 3600.0
    """``MODELGUARD_PROCESSED_OUTPUTS_KEEP_HOURS`` (default 336, twice the topics' default retention): how long a
    service keeps the outputs of an input it handled, to send them again if the input comes again."""
    mcl_batch_max_records: int = 2000
    """``MODELGUARD_MCL_BATCH_MAX_RECORDS``: how many MCL records the context service handles and commits at once."""
    datahub_root: Path | None = None
    """Where relative ``datahub_files`` and ``datahub_change_files`` are read (named as they are, in provenance);
    None: the working directory. Not from the environment: ``investigate`` and ``rerun`` read the repository's
    fixture files, named relative to it as the embedded stack's processes name them, without a ``chdir``."""
    instance: str | None = None
    """``MODELGUARD_INSTANCE``: this process's name in the stack (a replica's ``diagnoser-2``); None: the service's."""
    signing_key_file: Path | None = None
    """``MODELGUARD_SIGNING_KEY_FILE``: the service's private key; None: ``<keys dir>/<service>.key``."""
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    """``MODELGUARD_LOG_LEVEL``, ``MODELGUARD_LOG_FORMAT``."""
    health: HealthSettings = field(default_factory=HealthSettings)
    """The probe and metrics server (``MODELGUARD_HEALTH_PORT``, ``MODELGUARD_HEALTH_HOST``); no port: none."""
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    """Where traces and metrics go (``OTEL_*``, ``MODELGUARD_METRICS_FILE``, ``libs/telemetry.py``)."""
    ingest: IngestSettings | None = None
    """The detector's ingestion endpoint (``MODELGUARD_INGEST_*``); None: off. Its token is not here."""
    context_provider: ContextProviderSettings = field(default_factory=ContextProviderSettings)
    """Which DataHub the context service reads (``MODELGUARD_CONTEXT_PROVIDER``, ``DATAHUB_GMS_URL``, ``…_MCP_URL``)."""

    @property
    def kafka_bootstrap(self) -> str:
        return self.kafka.bootstrap

    @property
    def mcl_kafka(self) -> KafkaConnection:
        """Where DataHub's MCL topics are read: DataHub's connection, else the bus."""
        return self.datahub_kafka or self.kafka

    @property
    def mcl_on_the_bus(self) -> bool:
        """True when the MCL topics are on the bus's cluster, read with the bus's identity (one client will do)."""
        return self.mcl_kafka == self.kafka

    @property
    def ledger_head_path(self) -> Path:
        """The latest sealed checkpoint, outside the database (see libs.ledger.external_head)."""
        return self.home / "ledger-head.json"

    @property
    def key_registry_path(self) -> Path:
        return self.keys_dir / "registry.json"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    def state_dir(self, service: str) -> Path:
        return self.home / "state" / service

    def scratch_dir(self, service: str) -> Path:
        """Where ``service`` lays out an incident's workspace and its commands' temporary files: its own folder under
        ``scratch_root`` (``MODELGUARD_SCRATCH_DIR``) when set, else under its state folder."""
        return self.scratch_root / service if self.scratch_root is not None else self.state_dir(service) / "scratch"


def load_settings(default_home: Path | None = None) -> Settings:
    """Settings from the environment; ``default_home`` replaces ``.modelguard`` when MODELGUARD_HOME is unset."""
    environ = os.environ
    home = Path(environ.get("MODELGUARD_HOME", str(default_home or ".modelguard"))).resolve()
    datahub_files = _paths("MODELGUARD_DATAHUB_FILES")
    trace = os.environ.get("MODELGUARD_TRACE_FILE")
    try:
        kafka = kafka_connection_from(os.environ, BUS_PREFIX, "127.0.0.1:9092")
        datahub_kafka = datahub_connection_from(os.environ, kafka)
    except KafkaConnectionError as exc:
        raise SettingsError(str(exc)) from None
    ledger_url = os.environ.get("MODELGUARD_LEDGER_URL", f"sqlite:///{home / 'ledger.sqlite'}")
    try:
        state_url = state_url_from(os.environ, ledger_url)
    except StateUrlError as exc:
        raise SettingsError(str(exc)) from None
    artifacts_url = os.environ.get(ARTIFACTS_URL_ENV, "").strip() or None
    s3_endpoint = os.environ.get(S3_ENDPOINT_ENV, "").strip() or None
    if artifacts_url is not None:
        try:
            s3_location_from(artifacts_url, s3_endpoint)
        except ArtifactsUrlError as exc:
            raise SettingsError(str(exc)) from None
    keys_dir = Path(environ.get("MODELGUARD_KEYS_DIR", str(home / "keys")))
    return Settings(
        home=home,
        kafka=kafka,
        datahub_kafka=None if datahub_kafka is kafka else datahub_kafka,
        kafka_idempotence=_flag("MODELGUARD_KAFKA_IDEMPOTENCE", False),
        kafka_session_timeout_ms=_int("MODELGUARD_KAFKA_SESSION_TIMEOUT_MS", 6000),
        kafka_partitions=_int("MODELGUARD_KAFKA_PARTITIONS", 3),
        kafka_fetch_max_wait_ms=_fetch_wait_ms(),
        bus_doorbells=Path(os.environ[DOORBELLS_ENV]) if os.environ.get(DOORBELLS_ENV) else None,
        ledger_url=ledger_url,
        state_url=state_url,
        claim_lease_s=_positive("MODELGUARD_CLAIM_LEASE_S", 30.0),
        processed_outputs_keep_s=_positive("MODELGUARD_PROCESSED_OUTPUTS_KEEP_HOURS", 336.0) * 3600.0,
        artifacts_url=artifacts_url,
        s3_endpoint_url=s3_endpoint,
        s3_credential_files=credential_files(os.environ),
        artifacts_dir=Path(os.environ.get("MODELGUARD_ARTIFACTS_DIR", str(home / "artifacts"))),
        keys_dir=keys_dir,
        policy_dir=Path(os.environ.get("MODELGUARD_POLICY_DIR", str(home / "policies"))),
        datahub_files=datahub_files,
        datahub_change_files=_paths("MODELGUARD_DATAHUB_CHANGES"),
        central_policy=Path(os.environ["MODELGUARD_CENTRAL_POLICY"])
        if os.environ.get("MODELGUARD_CENTRAL_POLICY")
        else None,
        publish_dir=Path(os.environ.get("MODELGUARD_PUBLISH_DIR", str(home / "publications"))),
        trace_file=Path(trace) if trace else None,
        scratch_root=_scratch_root(),
        schema_registry_url=os.environ.get("MODELGUARD_SCHEMA_REGISTRY_URL") or None,
        mcl_topics=tuple(
            t.strip()
            for t in os.environ.get(
                "MODELGUARD_MCL_TOPICS", "MetadataChangeLog_Versioned_v1,MetadataChangeLog_Timeseries_v1"
            ).split(",")
            if t.strip()
        ),
        publishing=load_publishing_settings(),
        ledger_checkpoint_interval_s=_positive("MODELGUARD_LEDGER_CHECKPOINT_INTERVAL_S", 10.0),
        ledger_head_log=Path(os.environ["MODELGUARD_LEDGER_HEAD_LOG"])
        if os.environ.get("MODELGUARD_LEDGER_HEAD_LOG")
        else None,
        mcl_start=_start_policy("MODELGUARD_MCL_START"),
        stuck_after_s=_positive("MODELGUARD_STUCK_AFTER_S", 900.0),
        mcl_batch_max_records=_at_least_one("MODELGUARD_MCL_BATCH_MAX_RECORDS", 2000),
        instance=os.environ.get("MODELGUARD_INSTANCE", "").strip() or None,
        signing_key_file=Path(key_file) if (key_file := os.environ.get("MODELGUARD_SIGNING_KEY_FILE")) else None,
        logging=logging_settings_from(environ),
        health=health_settings_from(environ),
        telemetry=telemetry_settings_from(environ),
        ingest=ingest_settings_from(environ, keys_dir),
        context_provider=context_provider_settings_from(environ),
    )


def _start_policy(name: str) -> StartPolicy:
    try:
        return parse_start_policy(os.environ.get(name, "latest"), name)
    except StartPolicyError as exc:
        raise SettingsError(str(exc)) from None


def _at_least_one(name: str, default: int) -> int:
    value = _int(name, default)
    if value < 1:
        raise SettingsError(f"{name} must be at least 1, got {value}")
    return value


def _positive(name: str, default: float) -> float:
    value = _float(name, default)
    if not value > 0:
        raise SettingsError(f"{name} must be positive, got {value}")
    return value


def _scratch_root() -> Path | None:
    text = os.environ.get(SCRATCH_DIR_ENV, "").strip()
    if not text:
        return None
    if not Path(text).is_absolute():
        raise SettingsError(f"{SCRATCH_DIR_ENV} must be an absolute path (got {text[:200]!r})")
    return Path(text)


def _paths(variable: str) -> tuple[Path, ...]:
    return tuple(Path(p) for p in os.environ.get(variable, "").split(os.pathsep) if p.strip())


def load_publishing_settings() -> PublishingSettings:
    mode = os.environ.get("MODELGUARD_PUBLISH_MODE", "fixture").strip().lower() or "fixture"
    if mode not in PUBLISH_MODES:
        raise SettingsError(f"MODELGUARD_PUBLISH_MODE must be one of {', '.join(PUBLISH_MODES)}, got {mode!r}")
    raw_apply = os.environ.get("MODELGUARD_PUBLISH_APPLY", "").replace(" ", ",")
    apply = frozenset(c.strip().lower() for c in raw_apply.split(",") if c.strip())
    if unknown := sorted(apply - set(PUBLISH_CHANNELS)):
        raise SettingsError(f"MODELGUARD_PUBLISH_APPLY names unknown channels {unknown}; known: {PUBLISH_CHANNELS}")
    key_file = os.environ.get("MODELGUARD_GITHUB_APP_PRIVATE_KEY_FILE")
    installation = _int("MODELGUARD_GITHUB_APP_INSTALLATION_ID", 0)
    return PublishingSettings(
        mode=mode,
        apply=apply,
        github_api_url=os.environ.get("MODELGUARD_GITHUB_API_URL", "https://api.github.com").rstrip("/"),
        github_app_id=os.environ.get("MODELGUARD_GITHUB_APP_ID") or None,
        github_app_private_key_file=Path(key_file) if key_file else None,
        github_app_installation_id=installation or None,
        datahub_gms_url=os.environ.get("DATAHUB_GMS_URL") or None,
    )


@dataclass(frozen=True)
class TopicsJobSettings:
    """The topic-creation job's (``libs/bus/topics_job.py``, the Helm chart's Job on a cluster without Strimzi):
    the bus and its security, partitions (``MODELGUARD_KAFKA_PARTITIONS``, default 6 here: a cluster's, not the
    embedded stack's 3), replication (``MODELGUARD_KAFKA_REPLICATION``, default 3) and the chart's per-topic
    config file (``MODELGUARD_TOPIC_CONFIG_FILE``; None: ``libs/bus/topic_config.py``'s)."""

    bus: KafkaConnection
    partitions: int = 6
    replication: int = 3
    config_file: Path | None = None


def load_topics_job_settings() -> TopicsJobSettings:
    try:
        bus = kafka_connection_from(os.environ, BUS_PREFIX, "127.0.0.1:9092")
    except KafkaConnectionError as exc:
        raise SettingsError(str(exc)) from None
    try:
        partitions = int(os.environ.get("MODELGUARD_KAFKA_PARTITIONS") or 6)
        replication = int(os.environ.get("MODELGUARD_KAFKA_REPLICATION") or 3)
    except ValueError:
        raise SettingsError("MODELGUARD_KAFKA_PARTITIONS and MODELGUARD_KAFKA_REPLICATION must be integers") from None
    config_file = os.environ.get("MODELGUARD_TOPIC_CONFIG_FILE", "").strip()
    return TopicsJobSettings(bus, partitions, replication, Path(config_file) if config_file else None)


DEFAULT_PACKAGE_INDEX = "https://pypi.org/simple"


@dataclass(frozen=True)
class EnvironmentSettings:
    """How ModelGuard builds the Python environment a workspace declares (libs/workspace_env,
    docs/workspace-environments.md). The index URL may carry credentials: it is never logged nor put on a
    command line, and only its credential-free form enters an environment's digest."""

    cache_dir: Path
    """Built environments, one folder per digest (``MODELGUARD_ENVIRONMENTS_DIR``, default ``$HOME/environments``)."""
    index_url: str = DEFAULT_PACKAGE_INDEX
    """The package index (``MODELGUARD_PACKAGE_INDEX``), a simple-API URL."""
    wheelhouse: Path | None = None
    """An offline folder of wheels (``MODELGUARD_WHEELHOUSE``): when set, the index is not used at all."""
    build_timeout_s: float = 600.0
    uv_cache_dir: Path | None = None
    """uv's download cache (``MODELGUARD_UV_CACHE_DIR``); None: uv's own default."""


def load_environment_settings() -> EnvironmentSettings:
    home = Path(os.environ.get("MODELGUARD_HOME", ".modelguard")).resolve()
    cache = os.environ.get("MODELGUARD_ENVIRONMENTS_DIR", "").strip()
    index = os.environ.get("MODELGUARD_PACKAGE_INDEX", "").strip() or DEFAULT_PACKAGE_INDEX
    if urlsplit(index).scheme not in ("http", "https", "file"):
        raise SettingsError("MODELGUARD_PACKAGE_INDEX must be an http(s):// or file:// URL of a simple index")
    wheelhouse = os.environ.get("MODELGUARD_WHEELHOUSE", "").strip()
    uv_cache = os.environ.get("MODELGUARD_UV_CACHE_DIR", "").strip()
    return EnvironmentSettings(
        cache_dir=Path(cache).resolve() if cache else home / "environments",
        index_url=index,
        wheelhouse=Path(wheelhouse).resolve() if wheelhouse else None,
        build_timeout_s=_positive("MODELGUARD_ENVIRONMENT_BUILD_TIMEOUT_S", 600.0),
        uv_cache_dir=Path(uv_cache).resolve() if uv_cache else None,
    )
