"""docker-compose.yml: valid by `docker compose config` where that CLI is installed, by the Compose
Specification's JSON Schema (vendored, see schemas/README.md) otherwise; and complete: Kafka in KRaft mode,
PostgreSQL, an OpenTelemetry collector, every service from the one image, health checks, no secret in the file."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from modelguard.stack import REPO_ROOT, SERVICES

COMPOSE = REPO_ROOT / "docker-compose.yml"
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "compose-spec.json").read_text())
ENV_EXAMPLE = REPO_ROOT / "deploy" / "compose" / "env.example"
SECRETS = {"POSTGRES_PASSWORD": "a-test-password", "MODELGUARD_INGEST_TOKEN": "a-test-token-0123456789"}


def _compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


def _docker_compose_cli() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "compose", "version"], capture_output=True, check=False).returncode == 0


def _schema_errors(document: dict[str, Any]) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def test_the_compose_file_is_valid() -> None:
    if _docker_compose_cli():
        done = subprocess.run(
            ["docker", "compose", "-f", str(COMPOSE), "config", "--quiet"],
            cwd=REPO_ROOT,
            env={**os.environ, **SECRETS},
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert _schema_errors(_compose()) == []


def test_the_schema_check_is_real() -> None:
    broken = copy.deepcopy(_compose())
    broken["services"]["detector"]["ports"] = {"8088": 8088}
    broken["services"]["kafka"]["healthcheck"]["interval"] = 10
    del broken["services"]["ledger"]["image"]
    broken["services"]["ledger"]["build"] = {"context": ".", "no-such-option": True}
    errors = _schema_errors(broken)
    assert any(e.startswith("services/detector/ports") for e in errors)
    assert any(e.startswith("services/kafka/healthcheck/interval") for e in errors)
    assert any(e.startswith("services/ledger/build") for e in errors)


def test_kafka_runs_in_kraft_mode_beside_postgresql_and_a_collector() -> None:
    services = _compose()["services"]
    kafka = services["kafka"]["environment"]
    assert kafka["KAFKA_PROCESS_ROLES"] == "broker,controller" and "KAFKA_ZOOKEEPER_CONNECT" not in kafka
    assert kafka["KAFKA_AUTO_CREATE_TOPICS_ENABLE"] == "false"
    assert services["postgres"]["image"].startswith("postgres:")
    assert services["otel-collector"]["image"].startswith("otel/opentelemetry-collector")
    config = yaml.safe_load((REPO_ROOT / "deploy" / "compose" / "otel-collector.yaml").read_text())
    assert set(config["service"]["pipelines"]) == {"traces", "metrics"}
    for service in services.values():
        image = service.get("image", "")
        assert ":" in image and not image.endswith(":latest"), f"pin {image}"


def test_every_service_runs_from_the_one_image_non_root_with_a_health_check() -> None:
    services = _compose()["services"]
    for name in SERVICES:
        service = services[name]
        assert service["command"] == ["python", "-m", f"services.{name}.main"]
        assert (service["image"], service["build"]) == ("modelguard:0.1.0", ".")
        assert service["user"] == "10001:10001" and service["read_only"] is True
        assert "/readyz" in " ".join(service["healthcheck"]["test"])
        assert service["environment"]["MODELGUARD_HEALTH_PORT"] == "8080"
        assert service["environment"]["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://otel-collector:4318"
        assert service["depends_on"]["init"] == {"condition": "service_completed_successfully"}
        assert service["depends_on"]["kafka"] == {"condition": "service_healthy"}
    assert "healthcheck" in services["kafka"] and "healthcheck" in services["postgres"]
    assert services["detector"]["environment"]["MODELGUARD_INGEST_PORT"] == "8088"
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    assert re.search(r"^USER 10001", dockerfile, re.M) and "FROM python:3.11-slim" in dockerfile


def test_the_console_reads_the_home_read_only_behind_its_token_on_loopback() -> None:
    console = _compose()["services"]["console"]
    assert console["command"] == ["python", "-m", "modelguard", "console", "--host", "0.0.0.0", "--port", "8080"]
    assert (console["image"], console["user"], console["read_only"]) == ("modelguard:0.1.0", "10001:10001", True)
    assert console["volumes"] == ["modelguard-home:/var/lib/modelguard:ro", "key-registry:/etc/modelguard/keys:ro"]
    assert console["environment"]["MODELGUARD_CONSOLE_TOKEN"].startswith("${MODELGUARD_CONSOLE_TOKEN:?")
    assert console["ports"] == ["127.0.0.1:8089:8080"]  # the console's own port is the one /readyz is probed on
    assert "http://127.0.0.1:8080/readyz" in " ".join(console["healthcheck"]["test"])
    assert "graphviz" in (REPO_ROOT / "Dockerfile").read_text()
    # the MCL intake's counts: the context service's health port, where every service serves /metrics
    services = _compose()["services"]
    assert console["environment"]["MODELGUARD_CONSOLE_CONTEXT_METRICS_URL"] == "http://context:8080/metrics"
    assert services["context"]["environment"]["MODELGUARD_HEALTH_PORT"] == "8080"


def test_what_the_dockerfile_copies_exists_and_is_not_docker_ignored() -> None:
    dockerfile = (REPO_ROOT / "Dockerfile").read_text()
    sources = [s for line in re.findall(r"^COPY (.+)$", dockerfile, re.M) for s in line.split()[:-1]]
    ignored = {line.strip() for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()}
    assert {"contracts", "libs", "services", "modelguard", "fixtures"} <= set(sources)
    for source in sources:
        assert (REPO_ROOT / source).exists(), source
        assert source not in ignored, source


def test_secrets_come_from_the_environment_and_every_variable_is_documented() -> None:
    text = COMPOSE.read_text()
    variables = set(re.findall(r"\$\{([A-Z_]+)", text))
    documented = {line.split("=")[0] for line in ENV_EXAMPLE.read_text().splitlines() if "=" in line}
    assert variables <= documented, variables - documented
    assert "${POSTGRES_PASSWORD:?" in text and "${MODELGUARD_INGEST_TOKEN:?" in text
    assert "modelguard:modelguard@" not in text


def test_the_files_the_compose_file_names_exist() -> None:
    document = _compose()
    for service in document["services"].values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (REPO_ROOT / source).exists(), volume
    for path in document["x-environment"]["MODELGUARD_DATAHUB_FILES"].split(os.pathsep):
        assert (REPO_ROOT / path).exists(), path


@pytest.mark.broker
def test_the_init_step_provisions_keys_policies_and_topics_once(tmp_path: Path) -> None:
    from contracts.registry import all_topics
    from libs.signing.keys import KeyRegistry
    from tests.support.broker import kafka_broker

    keys = tmp_path / "key-volumes"  # one folder per compose volume: key-registry, key-<service>
    init = [sys.executable, str(REPO_ROOT / "deploy" / "compose" / "init.py")]
    with kafka_broker(tmp_path) as bootstrap:
        env = {**os.environ, "MODELGUARD_HOME": str(tmp_path / "home"), "MODELGUARD_KAFKA_BOOTSTRAP": bootstrap}
        env |= {"PYTHONPATH": str(REPO_ROOT), "MODELGUARD_COMPOSE_KEY_VOLUMES": str(keys)}
        first = subprocess.run(init, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
        provisioned = {p.name: p.read_bytes() for p in keys.glob("*/*.key")}
        again = subprocess.run(init, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)

    assert first.returncode == 0, first.stderr
    assert {name.removesuffix(".key") for name in provisioned} == {*SERVICES, "reporter"}
    assert all((keys / name.removesuffix(".key") / name).is_file() for name in provisioned), "a volume per key"
    assert len(KeyRegistry.load(keys / "registry" / "registry.json")) == len(SERVICES) + 1
    assert list((tmp_path / "home" / "policies").glob("*.yaml"))
    assert not (tmp_path / "home" / "keys").exists(), "nothing on the shared home volume"
    assert first.stdout.strip().endswith(f"{len(all_topics())} topics created")
    assert again.returncode == 0 and again.stdout.strip().endswith(" 0 topics created")
    assert {p.name: p.read_bytes() for p in keys.glob("*/*.key")} == provisioned, "keys are kept, not regenerated"
