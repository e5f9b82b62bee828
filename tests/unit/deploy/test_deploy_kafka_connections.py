"""The two Kafka connections in the Helm chart, read the way the services read them: the default keeps DataHub's MCL
topics on the bus; the secured example (deploy/helm/examples/secured-kafka.yaml) gives every service the bus's
SCRAM-over-TLS credentials from the Secret modelguard-kafka and only the context service DataHub's from
modelguard-datahub-kafka. Each pod's environment (ConfigMaps and env) goes through libs/bus/kafka_connection.py with
the Secrets' files in place, so a variable the code does not read, or a path no volume holds, fails here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from libs.bus.kafka_connection import BUS_PREFIX, KafkaConnection, datahub_connection_from, kafka_connection_from
from libs.datahub.mcl.registry_auth import registry_auth_for
from modelguard.stack import REPO_ROOT, SERVICES
from tests.support.helm import by_kind, example, render
from tests.support.tls_files import write_tls_files

SECRET_FILES = {"password": "scram-password-of-the-kafka-user", "registry-token": "datahub-access-token"}
SECURED = example("secured-kafka.yaml")
MSK = example("msk-without-strimzi.yaml")


def _pods(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: d["spec"]["template"]["spec"] for name, d in by_kind(documents, "Deployment").items()}


def _environment(pod: dict[str, Any], documents: list[dict[str, Any]], root: Path) -> dict[str, str]:
    """The container's environment as the kubelet makes it, each mounted Secret's files written under ``root``."""
    [container] = pod["containers"]
    maps = by_kind(documents, "ConfigMap")
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        env.update(maps[source["configMapRef"]["name"]]["data"])
    secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    mounted: dict[str, Path] = {}
    for mount in container["volumeMounts"]:
        if mount["name"] in secrets:
            folder = root / secrets[mount["name"]]
            folder.mkdir(parents=True, exist_ok=True)
            tls = write_tls_files(folder / ".tls")
            (folder / "ca.crt").write_bytes(tls.ca.read_bytes())
            (folder / "user.crt").write_bytes(tls.cert.read_bytes())
            (folder / "user.key").write_bytes(tls.key.read_bytes())
            for name, value in SECRET_FILES.items():
                (folder / name).write_text(value)
            mounted[mount["mountPath"]] = folder
    for item in container.get("env", []):
        if "value" not in item:
            continue
        value = item["value"]
        if item["name"].endswith("_FILE") and item["name"] != "MODELGUARD_SIGNING_KEY_FILE":
            under = [(m, f) for m, f in mounted.items() if value.startswith(m + "/")]
            if under or "KAFKA" in item["name"] or "SCHEMA_REGISTRY" in item["name"]:
                [(mount_path, folder)] = under  # a connection's file is in a mounted Secret, or this fails
                value = str(folder / value.removeprefix(mount_path + "/"))
        env[item["name"]] = value
    return env


def _connections(env: dict[str, str]) -> tuple[KafkaConnection, KafkaConnection]:
    bus = kafka_connection_from(env, BUS_PREFIX, "127.0.0.1:9092")
    return bus, datahub_connection_from(env, bus)


def test_the_default_reads_datahubs_topics_on_the_bus_and_its_kafka_egress_is_one_policy(tmp_path: Path) -> None:
    documents = render()
    pods = _pods(documents)
    for service in SERVICES:
        env = _environment(pods[f"modelguard-{service}"], documents, tmp_path / service)
        bus, datahub = _connections(env)
        assert bus == KafkaConnection("modelguard-kafka-bootstrap.kafka:9092") and datahub is bus
        assert registry_auth_for(env, env.get("MODELGUARD_SCHEMA_REGISTRY_URL") or None).kind == "none"
    assert "MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP" in _environment(pods["modelguard-context"], documents, tmp_path)
    policies = by_kind(documents, "NetworkPolicy")
    [kafka] = policies["modelguard-kafka"]["spec"]["egress"]
    assert kafka["to"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kafka"}}}]
    assert {p["port"] for p in kafka["ports"]} == {9092, 9093}
    common = policies["modelguard-common"]["spec"]["egress"]
    assert not any(p["port"] in (9092, 9093) for rule in common for p in rule["ports"]), "Kafka only in its policy"
    assert "modelguard-datahub-kafka" not in policies


def test_the_secured_example_gives_every_service_the_bus_credentials_and_only_the_context_service_datahubs(
    tmp_path: Path,
) -> None:
    documents = render(*SECURED)
    pods = _pods(documents)
    for service in SERVICES:
        env = _environment(pods[f"modelguard-{service}"], documents, tmp_path / service)
        bus, datahub = _connections(env)
        assert bus.describe() == "modelguard-kafka-bootstrap.kafka:9093 (SASL_SSL SCRAM-SHA-512 as modelguard)"
        assert bus.password == SECRET_FILES["password"] and bus.ca_file is not None
        auth = registry_auth_for(env, env.get("MODELGUARD_SCHEMA_REGISTRY_URL") or None)
        if service == "context":
            assert (
                datahub.describe()
                == "datahub-kafka-kafka-bootstrap.datahub:9093 (SASL_SSL SCRAM-SHA-512 as modelguard)"
            )
            assert datahub != bus and datahub.password == SECRET_FILES["password"] and datahub.ca_file is not None
            assert auth.headers() == {"Authorization": f"Bearer {SECRET_FILES['registry-token']}"}
            assert env["MODELGUARD_MCL_START"] == "24h"
        else:
            assert datahub is bus and auth.kind == "none"
            assert not any(k.startswith(("MODELGUARD_DATAHUB_KAFKA_", "MODELGUARD_SCHEMA_REGISTRY_")) for k in env)
    runner = pods["modelguard-runner"]
    assert not any("secret" in v for v in runner["volumes"]), "the workspace runner holds no Kafka credential"
    assert not any("secret" in v for v in pods["modelguard-console"]["volumes"]), "nor does the console"
    policy = by_kind(documents, "NetworkPolicy")["modelguard-datahub-kafka"]["spec"]
    assert policy["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "modelguard-context"}}


def test_mutual_tls_gives_the_client_certificate_and_key_as_files(tmp_path: Path) -> None:
    documents = render(
        "--set",
        "kafka.securityProtocol=SSL",
        "--set",
        "kafka.secretName=modelguard-kafka-user",
        "--set",
        "kafka.tls.ca=true",
        "--set",
        "kafka.tls.clientCertificate=true",
    )
    env = _environment(_pods(documents)["modelguard-diagnoser"], documents, tmp_path)
    bus, _ = _connections(env)
    assert bus.describe() == "modelguard-kafka-bootstrap.kafka:9092 (SSL)"
    assert bus.cert_file is not None and bus.cert_file.name == "user.crt"
    assert bus.key_file is not None and bus.key_file.name == "user.key"
    assert bus.password is None


def test_secrets_are_files_from_secrets_and_the_secured_example_is_documented() -> None:
    documents = render(*SECURED)
    referenced = set()
    for pod in _pods(documents).values():
        [container] = pod["containers"]
        secret_mounts = {
            m["mountPath"]
            for m in container.get("volumeMounts", [])
            if any(v["name"] == m["name"] and "secret" in v for v in pod["volumes"])
        }
        for item in container.get("env", []):
            if any(word in item["name"] for word in ("PASSWORD", "TOKEN")) and "value" in item:
                assert item["name"].endswith("_FILE"), item
                assert any(item["value"].startswith(m + "/") for m in secret_mounts), item
        referenced |= {v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    assert {"modelguard-kafka", "modelguard-datahub-kafka"} <= referenced
    for config in by_kind(documents, "ConfigMap").values():
        assert not any(word in key for key in config.get("data", {}) for word in ("PASSWORD", "TOKEN", "SECRET"))
    documented = (REPO_ROOT / "docs" / "deploy.md").read_text()
    for needed in ("`modelguard-kafka`", "`modelguard-datahub-kafka`", "deploy/helm/examples/secured-kafka.yaml"):
        assert needed in documented, needed


@pytest.mark.parametrize(
    ("secret", "keys"),
    [
        ("modelguard-kafka", {"password", "ca.crt"}),
        ("modelguard-datahub-kafka", {"password", "ca.crt", "registry-token"}),
    ],
)
def test_the_docs_say_how_to_make_each_secret_the_secured_example_reads(secret: str, keys: set[str]) -> None:
    """Every file the pods read from the Secret is a key the documented `kubectl create secret` puts in it."""
    documents = render(*SECURED)
    read = set()
    for pod in _pods(documents).values():
        volumes = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
        [container] = pod["containers"]
        mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"] if m["name"] in volumes}
        for item in container.get("env", []):
            for path, name in mounts.items():
                if name == secret and item.get("value", "").startswith(path + "/"):
                    read.add(item["value"].removeprefix(path + "/"))
    assert read == keys
    text = (REPO_ROOT / "docs" / "deploy.md").read_text()
    command = re.search(rf"create secret generic {secret} ((?:[^\n]*\\\n)*[^\n]*)", text)
    assert command is not None, f"docs/deploy.md does not create {secret}"
    assert set(re.findall(r"--from-(?:literal|file)=([\w.-]+)=", command.group(1))) == keys


def test_the_topic_job_gets_the_bus_credentials_where_strimzi_does_not_manage_the_topics(tmp_path: Path) -> None:
    """MSK or Confluent Cloud: no Strimzi, so the topic Job creates the topics, with the bus's SASL credentials."""
    documents = render(*MSK)
    [job] = [d for d in documents if d["kind"] == "Job"]
    env = _environment(job["spec"]["template"]["spec"], documents, tmp_path / "files")
    bus, _ = _connections(env)
    assert bus.describe().endswith(":9096 (SASL_SSL SCRAM-SHA-512 as modelguard)")
    assert bus.password == SECRET_FILES["password"] and bus.ca_file is None, "Amazon's CAs: the system's"
