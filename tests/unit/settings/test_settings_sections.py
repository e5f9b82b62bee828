"""Settings and their sections, parsed once from the environment: secrets never in their repr, the observability
sections' defaults and their one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.observability.settings import LoggingSettings, OtlpSignal, TelemetrySettings
from libs.settings import SettingsError, load_runner_settings, load_settings

SECRETS = {
    "MODELGUARD_INGEST_TOKEN": "ingest-token-0123456789",
    "DATAHUB_GMS_TOKEN": "gms-token-0123456789",
    "GITHUB_TOKEN": "ghp_github-token-0123456789",
    "MODELGUARD_KAFKA_SASL_PASSWORD": "sasl-password-0123456789",
    "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer otlp-token-0123456789",
    "MODELGUARD_WEBHOOK_SECRET": "webhook-secret-0123456789",
}


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HOME", str(tmp_path))
    for name in (
        "MODELGUARD_LOG_LEVEL",
        "MODELGUARD_LOG_FORMAT",
        "MODELGUARD_METRICS_FILE",
        "MODELGUARD_METRICS_EXPORT_INTERVAL_MS",
        "OTEL_SERVICE_NAME",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
    ):
        monkeypatch.delenv(name, raising=False)


def test_no_secret_reaches_the_settings_repr(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MODELGUARD_KAFKA_SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("MODELGUARD_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512")
    monkeypatch.setenv("MODELGUARD_KAFKA_SASL_USERNAME", "modelguard")
    monkeypatch.setenv("MODELGUARD_INGEST_PORT", "8088")
    monkeypatch.setenv("MODELGUARD_CONTEXT_PROVIDER", "sdk")
    monkeypatch.setenv("DATAHUB_GMS_URL", "http://gms:8080")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:otlp-endpoint-password@collector:4318")
    settings = load_settings()
    shown = repr(settings)
    assert settings.ingest is not None and settings.context_provider.gms_url == "http://gms:8080"
    assert settings.kafka.password == SECRETS["MODELGUARD_KAFKA_SASL_PASSWORD"]  # kept, for the connection
    leaked = [name for name, value in SECRETS.items() if value in shown]
    assert leaked == []
    assert "otlp-endpoint-password" not in shown
    assert settings.telemetry.traces.exported and settings.telemetry.metrics.exported


def test_the_observability_defaults() -> None:
    settings = load_settings()
    assert settings.logging == LoggingSettings("INFO", None)
    assert settings.telemetry == TelemetrySettings(OtlpSignal(False), OtlpSignal(False), None, None, 15_000)
    assert settings.health.port is None


def test_the_observability_variables_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MODELGUARD_LOG_LEVEL", "debug")
    monkeypatch.setenv("MODELGUARD_LOG_FORMAT", "Text")
    monkeypatch.setenv("MODELGUARD_METRICS_FILE", str(tmp_path / "points.jsonl"))
    monkeypatch.setenv("MODELGUARD_METRICS_EXPORT_INTERVAL_MS", "500")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://collector:4317")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "churn-eu")
    settings = load_settings()
    assert settings.logging == LoggingSettings("DEBUG", "text")
    assert settings.telemetry == TelemetrySettings(
        OtlpSignal(False), OtlpSignal(True, "grpc"), "churn-eu", tmp_path / "points.jsonl", 500
    )


@pytest.mark.parametrize(
    ("variable", "raw", "says"),
    [
        ("MODELGUARD_LOG_LEVEL", "loud", "MODELGUARD_LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
        ("MODELGUARD_METRICS_EXPORT_INTERVAL_MS", "often", "MODELGUARD_METRICS_EXPORT_INTERVAL_MS must be a positive"),
        ("MODELGUARD_METRICS_EXPORT_INTERVAL_MS", "0", "MODELGUARD_METRICS_EXPORT_INTERVAL_MS must be a positive"),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "udp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be one of"),
        ("MODELGUARD_HEALTH_PORT", "99999", "MODELGUARD_HEALTH_PORT must be a TCP port number, got '99999'"),
    ],
)
def test_a_bad_value_is_one_line(monkeypatch: pytest.MonkeyPatch, variable: str, raw: str, says: str) -> None:
    monkeypatch.setenv(variable, raw)
    with pytest.raises(SettingsError, match=says) as caught:
        load_settings()
    assert "\n" not in str(caught.value)


def test_the_runner_reads_its_probe_port_and_log_level_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELGUARD_HEALTH_PORT", "8080")
    monkeypatch.setenv("MODELGUARD_LOG_LEVEL", "WARNING")
    runner = load_runner_settings()
    assert (runner.health.port, runner.logging.level) == (8080, "WARNING")
