"""The two Kafka connections in the Kubernetes manifests, read the way the services read them: the base keeps
DataHub's MCL topics on the bus; the secured overlay gives every service the bus's SCRAM-over-TLS credentials from
the Secret modelguard-kafka and only the context service DataHub's from modelguard-datahub-kafka. Each pod's
environment (ConfigMaps and env) goes through libs/bus/kafka_connection.py with the Secrets' files in place, so a
variable the code does not read, or a path no volume holds, fails here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from libs.bus.kafka_connection import BUS_PREFIX, KafkaConnection, datahub_connection_from, kafka_connection_from
from libs.datahub.mcl.registry_auth import registry_auth_for
from modelguard.stack import REPO_ROOT, SERVICES
from tests.support.tls_files import write_tls_files
from tests.unit.deploy.test_deploy_kubernetes import _by_kind, _problems, _rendered

SECRET_FILES = {"password": "scram-password-of-the-kafka-user", "registry-token": "datahub-access-token"}


def _pods(documents: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: d["spec"]["template"]["spec"] for name, d in _by_kind(documents, "Deployment").items()}


def _environment(pod: dict[str, Any], documents: list[dict[str, Any]], root: Path) -> dict[str, str]:
    """The container's environment as the kubelet makes it, each mounted Secret's files written under ``root``."""
    [container] = pod["containers"]
    maps = _by_kind(documents, "ConfigMap")
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
            for name, value in SECRET_FILES.items():
                (folder / name).write_text(value)
            mounted[mount["mountPath"]] = folder
    for item in container.get("env", []):
        if "value" not in item:
            continue
        value = item["value"]
        if item["name"].endswith("_FILE") and item["name"] != "MODELGUARD_SIGNING_KEY_FILE":
            [(mount_path, folder)] = [(m, f) for m, f in mounted.items() if value.startswith(m + "/")]
            value = str(folder / value.removeprefix(mount_path + "/"))
        env[item["name"]] = value
    return env


def _connections(env: dict[str, str]) -> tuple[KafkaConnection, KafkaConnection]:
    bus = kafka_connection_from(env, BUS_PREFIX, "127.0.0.1:9092")
    return bus, datahub_connection_from(env, bus)


def test_the_base_reads_datahubs_topics_on_the_bus_and_its_kafka_egress_is_one_policy(tmp_path: Path) -> None:
    documents = _rendered("default")
    pods = _pods(documents)
    for service in SERVICES:
        env = _environment(pods[f"modelguard-{service}"], documents, tmp_path / service)
        bus, datahub = _connections(env)
        assert bus == KafkaConnection("modelguard-kafka-bootstrap.kafka:9092") and datahub is bus
        assert registry_auth_for(env, env.get("MODELGUARD_SCHEMA_REGISTRY_URL") or None).kind == "none"
    assert "MODELGUARD_DATAHUB_KAFKA_BOOTSTRAP" in _environment(pods["modelguard-context"], documents, tmp_path)
    policies = _by_kind(documents, "NetworkPolicy")
    [kafka] = policies["modelguard-kafka"]["spec"]["egress"]
    assert kafka["to"] == [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kafka"}}}]
    assert {p["port"] for p in kafka["ports"]} == {9092, 9093}
    common = policies["modelguard-common"]["spec"]["egress"]
    assert not any(p["port"] in (9092, 9093) for rule in common for p in rule["ports"]), "Kafka only in its policy"


def test_the_secured_overlay_gives_every_service_the_bus_credentials_and_only_the_context_service_datahubs(
    tmp_path: Path,
) -> None:
    documents = _rendered("secured-kafka")
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
        else:
            assert datahub is bus and auth.kind == "none"
            assert not any(k.startswith(("MODELGUARD_DATAHUB_KAFKA_", "MODELGUARD_SCHEMA_REGISTRY_")) for k in env)
    runner = pods["modelguard-runner"]
    assert not any("secret" in v for v in runner["volumes"]), "the workspace runner holds no Kafka credential"
    policy = _by_kind(documents, "NetworkPolicy")["modelguard-datahub-kafka"]["spec"]
    assert policy["podSelector"] == {"matchLabels": {"app.kubernetes.io/name": "modelguard-context"}}


def test_secrets_are_files_from_secrets_and_the_secured_overlays_are_documented() -> None:
    documents = _rendered("secured-kafka")
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
    for config in _by_kind(documents, "ConfigMap").values():
        assert not any(word in key for key in config.get("data", {}) for word in ("PASSWORD", "TOKEN", "SECRET"))
    documented = (REPO_ROOT / "docs" / "deploy.md").read_text()
    for needed in (
        "`modelguard-kafka`",
        "`modelguard-datahub-kafka`",
        "overlays/secured-kafka",
        "components/kafka-auth",
    ):
        assert needed in documented, needed


@pytest.mark.parametrize("component", ["kafka-auth", "datahub-kafka"])
def test_each_component_says_how_to_make_its_secret(component: str) -> None:
    text = (REPO_ROOT / "deploy" / "components" / component / "kustomization.yaml").read_text()
    secret = "modelguard-kafka" if component == "kafka-auth" else "modelguard-datahub-kafka"
    assert f"create secret generic {secret}" in text
    assert yaml.safe_load(text)["kind"] == "Component"


def test_the_topic_job_gets_the_bus_credentials_where_strimzi_does_not_manage_the_topics(tmp_path: Path) -> None:
    """MSK or Confluent Cloud: no Strimzi, so the topic Job creates the topics, with the bus's SASL credentials."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    copy = tmp_path / "deploy"
    shutil.copytree(REPO_ROOT / "deploy", copy)
    overlay = copy / "overlays" / "sasl-without-strimzi"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
        "resources: [../without-strimzi]\ncomponents: [../../components/kafka-auth]\n"
    )
    done = subprocess.run([kubectl, "kustomize", str(overlay)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    documents = [d for d in yaml.safe_load_all(done.stdout) if d]
    [job] = [d for d in documents if d["kind"] == "Job"]
    env = _environment(job["spec"]["template"]["spec"], documents, tmp_path / "files")
    bus, _ = _connections(env)
    assert bus.describe() == "modelguard-kafka-bootstrap.kafka:9093 (SASL_SSL SCRAM-SHA-512 as modelguard)"
    assert bus.password == SECRET_FILES["password"]
    assert [p for d in documents for p in _problems(d)] == []
