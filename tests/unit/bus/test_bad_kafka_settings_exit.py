"""A service, or the topic Job, started with a Kafka setting that cannot work says so in one line and exits 2,
before it tries to connect (the supervisor's log and `kubectl logs` show the line, not a traceback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from libs.signing.keys import provision_keys

REPO_ROOT = Path(__file__).resolve().parents[3]


def _run(module: str, env: dict[str, str], home: Path) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MODELGUARD_KAFKA_", "MODELGUARD_DATAHUB_", "MODELGUARD_SCHEMA_"))
    }
    return subprocess.run(
        [sys.executable, "-m", module],
        cwd=REPO_ROOT,
        env={**clean, "MODELGUARD_HOME": str(home), "MODELGUARD_KAFKA_BOOTSTRAP": "127.0.0.1:1", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_service_with_sasl_and_no_password_exits_2_with_one_line(tmp_path: Path) -> None:
    done = _run(
        "services.context.main",
        {
            "MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP": "datahub-kafka:9096",
            "MODELGUARD_DATAHUB_KAFKA_SECURITY_PROTOCOL": "SASL_SSL",
            "MODELGUARD_DATAHUB_KAFKA_SASL_MECHANISM": "SCRAM-SHA-512",
            "MODELGUARD_DATAHUB_KAFKA_SASL_USERNAME": "modelguard",
        },
        tmp_path,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        "context: MODELGUARD_DATAHUB_KAFKA_SASL_PASSWORD or MODELGUARD_DATAHUB_KAFKA_SASL_PASSWORD_FILE is required "
        "with SASL_SSL"
    ]


def test_the_topic_job_with_an_unknown_protocol_exits_2_with_one_line(tmp_path: Path) -> None:
    done = _run("libs.bus.topics_job", {"MODELGUARD_KAFKA_SECURITY_PROTOCOL": "SCRAM"}, tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        "topics: MODELGUARD_KAFKA_SECURITY_PROTOCOL must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, "
        "got 'SCRAM'"
    ]


def test_registry_credentials_for_no_registry_stop_the_context_service_with_one_line(tmp_path: Path) -> None:
    provision_keys(["context"], tmp_path / "keys")
    done = _run("services.context.main", {"MODELGUARD_SCHEMA_REGISTRY_TOKEN": "t0ken-value"}, tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.splitlines() == [
        "context: schema registry credentials are set but MODELGUARD_SCHEMA_REGISTRY_URL is not"
    ]
