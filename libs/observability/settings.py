"""What a process is told about its own observability, parsed once at start (``libs/settings.py`` gathers these
sections into ``Settings``): its log level and format, its probe server's address, and where its traces and
metrics go. Each parser reads the mapping it is handed (the process environment, in production) and refuses a bad
value in one line (``SettingsError``). None of these variables holds a secret: the OTLP exporters' headers, which
may, are read by the OpenTelemetry exporters themselves and never stored here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from libs.settings_error import SettingsError

LOG_LEVEL_ENV = "MODELGUARD_LOG_LEVEL"
LOG_FORMAT_ENV = "MODELGUARD_LOG_FORMAT"
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_FORMATS = ("json", "text")

HEALTH_PORT_ENV = "MODELGUARD_HEALTH_PORT"
HEALTH_HOST_ENV = "MODELGUARD_HEALTH_HOST"

OTLP_PROTOCOLS = ("http/protobuf", "grpc")
DEFAULT_FILE_EXPORT_INTERVAL_MS = 15_000
METRICS_FILE_ENV = "MODELGUARD_METRICS_FILE"
METRICS_INTERVAL_ENV = "MODELGUARD_METRICS_EXPORT_INTERVAL_MS"


@dataclass(frozen=True)
class LoggingSettings:
    """``MODELGUARD_LOG_LEVEL`` (default INFO) and ``MODELGUARD_LOG_FORMAT`` (``json`` or ``text``; None: text on
    a terminal, JSON anywhere else, ``libs/observability/log_format.py``)."""

    level: str = "INFO"
    format: str | None = None


@dataclass(frozen=True)
class HealthSettings:
    """The probe and metrics server (``libs/bus/health.py``): ``MODELGUARD_HEALTH_PORT`` (None: no server) and
    ``MODELGUARD_HEALTH_HOST`` (default 0.0.0.0)."""

    port: int | None = None
    host: str = "0.0.0.0"


@dataclass(frozen=True)
class OtlpSignal:
    """Whether one signal (traces or metrics) goes over OTLP (its own ``OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT`` or
    the general one is set) and over which ``protocol`` (``…_<SIGNAL>_PROTOCOL``, else the general one). The
    exporter reads its endpoint, headers, timeout and certificate itself, as the SDK documents: an endpoint may
    carry credentials, so it is not kept here."""

    exported: bool = False
    protocol: str = "http/protobuf"


@dataclass(frozen=True)
class TelemetrySettings:
    """``libs/telemetry.py``'s configuration: OTLP per signal, ``OTEL_SERVICE_NAME`` (None: ``modelguard-<service>``),
    ``MODELGUARD_METRICS_FILE`` (None: ``metrics.jsonl`` beside the trace file) and how often that file is
    written (``MODELGUARD_METRICS_EXPORT_INTERVAL_MS``)."""

    traces: OtlpSignal = field(default_factory=OtlpSignal)
    metrics: OtlpSignal = field(default_factory=OtlpSignal)
    service_name: str | None = None
    metrics_file: Path | None = None
    metrics_export_interval_ms: int = DEFAULT_FILE_EXPORT_INTERVAL_MS


def logging_settings_from(environ: Mapping[str, str]) -> LoggingSettings:
    level = environ.get(LOG_LEVEL_ENV, "").strip().upper() or "INFO"
    if level not in LOG_LEVELS:
        raise SettingsError(f"{LOG_LEVEL_ENV} must be one of {', '.join(LOG_LEVELS)}, got {level[:40]!r}")
    raw = environ.get(LOG_FORMAT_ENV, "").strip().lower()
    if raw and raw not in LOG_FORMATS:
        raise SettingsError(f"{LOG_FORMAT_ENV} must be one of {', '.join(LOG_FORMATS)}, got {raw!r}")
    return LoggingSettings(level=level, format=raw or None)


def health_settings_from(environ: Mapping[str, str]) -> HealthSettings:
    raw = environ.get(HEALTH_PORT_ENV, "").strip()
    host = environ.get(HEALTH_HOST_ENV, "").strip() or "0.0.0.0"
    if not raw or raw == "0":
        return HealthSettings(None, host)
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise SettingsError(f"{HEALTH_PORT_ENV} must be a TCP port number, got {raw!r}")
    return HealthSettings(int(raw), host)


def _otlp_signal(environ: Mapping[str, str], signal: str) -> OtlpSignal:
    exported = any(
        environ.get(name, "").strip()
        for name in (f"OTEL_EXPORTER_OTLP_{signal}_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    for name in (f"OTEL_EXPORTER_OTLP_{signal}_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        raw = environ.get(name, "").strip()
        if raw:
            if raw not in OTLP_PROTOCOLS:
                raise SettingsError(f"{name} must be one of {', '.join(OTLP_PROTOCOLS)}, got {raw!r}")
            return OtlpSignal(exported, raw)
    return OtlpSignal(exported)


def telemetry_settings_from(environ: Mapping[str, str]) -> TelemetrySettings:
    raw_interval = environ.get(METRICS_INTERVAL_ENV, "").strip()
    try:
        interval = int(raw_interval) if raw_interval else DEFAULT_FILE_EXPORT_INTERVAL_MS
    except ValueError:
        interval = 0
    if interval < 1:
        raise SettingsError(f"{METRICS_INTERVAL_ENV} must be a positive number of milliseconds, got {raw_interval!r}")
    metrics_file = environ.get(METRICS_FILE_ENV, "").strip()
    return TelemetrySettings(
        traces=_otlp_signal(environ, "TRACES"),
        metrics=_otlp_signal(environ, "METRICS"),
        service_name=environ.get("OTEL_SERVICE_NAME", "").strip() or None,
        metrics_file=Path(metrics_file) if metrics_file else None,
        metrics_export_interval_ms=interval,
    )
