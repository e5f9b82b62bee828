"""The Kubernetes manifests: every file valid against the Kubernetes schemas (kubernetes-validate, offline,
strict: an unknown field fails), each variant rendered by kustomize (`kubectl kustomize`) and valid, and what
production needs: a Deployment per service with probes, requests, non-root read-only pods, keys and tokens from
Secrets, configuration and policy in ConfigMaps, topics from Strimzi or a Job, a NetworkPolicy, KEDA as an option.
Custom resources (Strimzi's KafkaTopic, KEDA's ScaledObject) are checked field by field, not against their CRDs."""

from __future__ import annotations

import copy
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from contracts.registry import all_topics
from libs.bundle.effective_policy import effective_policy, read_central_policy
from libs.bundle.load import load_bundle
from libs.policy import parse_policy
from modelguard.stack import REPO_ROOT, SERVICES

DEPLOY = REPO_ROOT / "deploy"
KUBERNETES_VERSION = "1.30.0"  # the oldest minor release still in common support; later ones accept the same
VARIANTS = {"default": DEPLOY / "kubernetes", "without-strimzi": DEPLOY / "overlays" / "without-strimzi"}
VARIANTS["with-keda"] = DEPLOY / "overlays" / "with-keda"
VARIANTS["with-monitoring"] = DEPLOY / "overlays" / "with-monitoring"
VARIANTS["secured-kafka"] = DEPLOY / "overlays" / "secured-kafka"
CUSTOM_KINDS = {"KafkaTopic", "ScaledObject", "ServiceMonitor", "PrometheusRule"}
SECRETS = {f"modelguard-key-{s}" for s in (*SERVICES, "reporter")} | {
    "modelguard-ledger",
    "modelguard-ingest",
    "modelguard-datahub",
    "modelguard-publisher",
    "modelguard-console",
}


def _documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


def _manifest_files() -> Iterator[Path]:
    for path in sorted(DEPLOY.rglob("*.yaml")):
        if "compose" in path.parts or path.name == "kustomization.yaml" or "policies" in path.parts:
            continue
        yield path


def _kubectl() -> str | None:
    return shutil.which("kubectl")


def _rendered(variant: str) -> list[dict[str, Any]]:
    kubectl = _kubectl()
    if kubectl is None:
        pytest.skip("kubectl is not installed: the files are validated one by one, the kustomize render is not")
    done = subprocess.run([kubectl, "kustomize", str(VARIANTS[variant])], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return _documents(done.stdout)


def _problems(document: dict[str, Any]) -> list[str]:
    if document["kind"] in CUSTOM_KINDS:
        return _custom_resource_problems(document)
    try:
        kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return [f"{document['kind']}/{document['metadata']['name']}: {'.'.join(map(str, exc.path))}: {exc.message}"]
    return []


def _custom_resource_problems(document: dict[str, Any]) -> list[str]:
    spec, name = document.get("spec", {}), document["metadata"].get("name", "?")
    if document["kind"] == "KafkaTopic":
        ok = document["apiVersion"] == "kafka.strimzi.io/v1beta2" and set(spec) <= {
            "topicName",
            "partitions",
            "replicas",
            "config",
        }
        ok = ok and spec["partitions"] >= 1 and 1 <= spec["replicas"] <= 32767
        ok = ok and "strimzi.io/cluster" in document["metadata"]["labels"]
    elif document["kind"] == "ServiceMonitor":
        ok = document["apiVersion"] == "monitoring.coreos.com/v1" and set(spec) <= {
            "jobLabel",
            "selector",
            "namespaceSelector",
            "endpoints",
        }
        ok = ok and bool(spec["selector"]["matchLabels"]) and bool(spec["endpoints"])
        ok = ok and all(
            set(e) <= {"port", "path", "interval", "scrapeTimeout"} and "port" in e for e in spec["endpoints"]
        )
    elif document["kind"] == "PrometheusRule":
        rules = [rule for group in spec["groups"] for rule in group["rules"]]
        ok = document["apiVersion"] == "monitoring.coreos.com/v1" and bool(rules)
        ok = ok and all(
            set(r) <= {"alert", "expr", "for", "labels", "annotations"} and {"alert", "expr"} <= set(r) for r in rules
        )
    else:
        ok = document["apiVersion"] == "keda.sh/v1alpha1" and "name" in spec["scaleTargetRef"]
        ok = ok and 0 <= spec["minReplicaCount"] <= spec["maxReplicaCount"]
        ok = ok and all(
            t["type"] == "kafka" and {"bootstrapServers", "consumerGroup"} <= set(t["metadata"])
            for t in spec["triggers"]
        )
    return [] if ok else [f"{document['kind']}/{name}: malformed"]


def test_every_manifest_file_is_valid_on_its_own() -> None:
    files = list(_manifest_files())
    assert len(files) >= 8
    problems = [p for path in files for d in _documents(path.read_text()) for p in _problems(d)]
    assert problems == []


def test_the_validation_is_strict() -> None:
    [deployment, *_] = _documents((DEPLOY / "kubernetes" / "services.yaml").read_text())
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["paht"] = "/readyz"
    assert _problems(broken)
    broken = copy.deepcopy(deployment)
    broken["spec"]["replicas"] = "two"
    assert _problems(broken)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_variant_renders_and_is_valid(variant: str) -> None:
    documents = _rendered(variant)
    assert [p for d in documents for p in _problems(d)] == []
    kinds = [d["kind"] for d in documents]
    topics = sorted(d["spec"]["topicName"] for d in documents if d["kind"] == "KafkaTopic")
    jobs = [d for d in documents if d["kind"] == "Job"]
    if variant == "without-strimzi":
        assert topics == [] and [j["spec"]["template"]["spec"]["containers"][0]["command"] for j in jobs] == [
            ["python", "-m", "libs.bus.topics_job"]
        ]
    else:
        assert topics == sorted(all_topics()) and jobs == []
    assert ("ScaledObject" in kinds) == (variant == "with-keda")
    assert ("ServiceMonitor" in kinds) == ("PrometheusRule" in kinds) == (variant == "with-monitoring")


def _by_kind(documents: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in documents if d["kind"] == kind}


def test_every_service_runs_non_root_read_only_probed_and_with_requests() -> None:
    documents = _rendered("default")
    deployments = _by_kind(documents, "Deployment")
    config = _by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
    claims = set(_by_kind(documents, "PersistentVolumeClaim"))
    # the runner: test_deploy_runner.py; the console: below
    assert set(deployments) == {f"modelguard-{s}" for s in SERVICES} | {"modelguard-runner", "modelguard-console"}
    for service in SERVICES:
        pod = deployments[f"modelguard-{service}"]["spec"]["template"]["spec"]
        [container] = pod["containers"]
        assert container["command"] == ["python", "-m", f"services.{service}.main"]
        assert pod["securityContext"]["runAsNonRoot"] and pod["securityContext"]["runAsUser"] == 10001
        assert pod["automountServiceAccountToken"] is False
        security = container["securityContext"]
        assert security["readOnlyRootFilesystem"] and not security["allowPrivilegeEscalation"]
        assert security["capabilities"]["drop"] == ["ALL"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports["health"] == int(config["MODELGUARD_HEALTH_PORT"])
        assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
        assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
        assert {"cpu", "memory"} <= set(container["resources"]["requests"])
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert {"/tmp", config["MODELGUARD_HOME"], config["MODELGUARD_KEYS_DIR"]} <= set(mounts)
        assert set(mounts.values()) == set(volumes)
        assert volumes["signing"]["secret"]["secretName"] == f"modelguard-key-{service}"
        used = {v["persistentVolumeClaim"]["claimName"] for v in volumes.values() if "persistentVolumeClaim" in v}
        assert used <= claims
        stateless = service == "ledger"
        assert ("persistentVolumeClaim" in volumes["state"]) is not stateless
        assert deployments[f"modelguard-{service}"]["spec"]["strategy"]["type"] == (
            "RollingUpdate" if stateless else "Recreate"
        )
    assert deployments["modelguard-ledger"]["spec"]["replicas"] > 1


def test_the_console_holds_no_signing_key_and_reads_the_artifacts_read_only() -> None:
    documents = _rendered("default")
    pod = _by_kind(documents, "Deployment")["modelguard-console"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert container["command"][:4] == ["python", "-m", "modelguard", "console"]
    assert pod["securityContext"]["runAsNonRoot"] and pod["automountServiceAccountToken"] is False
    assert container["securityContext"]["readOnlyRootFilesystem"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert not any(v.get("secret") for v in volumes.values()), "no key in the console's pod"
    assert volumes["artifacts"]["persistentVolumeClaim"] == {"claimName": "modelguard-artifacts", "readOnly": True}
    env = {e["name"]: e for e in container["env"]}
    assert env["MODELGUARD_CONSOLE_TOKEN"]["valueFrom"]["secretKeyRef"] == {
        "name": "modelguard-console",
        "key": "token",
    }
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    service = _by_kind(documents, "Service")["modelguard-console"]["spec"]
    assert service["selector"] == {"app.kubernetes.io/name": "modelguard-console"}
    database = _by_kind(documents, "NetworkPolicy")["modelguard-database"]["spec"]["podSelector"]
    assert "modelguard-console" in database["matchExpressions"][0]["values"]


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A label selector (matchLabels, matchExpressions with In / NotIn) as the API server evaluates it."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        present = labels.get(expression["key"]) in expression["values"]
        if present != (expression["operator"] == "In"):
            return False
    return True


def test_the_console_reaches_the_context_services_metrics_and_no_kafka() -> None:
    documents = _rendered("default")
    deployments = _by_kind(documents, "Deployment")
    console = deployments["modelguard-console"]["spec"]["template"]
    context = deployments["modelguard-context"]["spec"]["template"]
    [container] = console["spec"]["containers"]
    url = {e["name"]: e.get("value") for e in container["env"]}["MODELGUARD_CONSOLE_CONTEXT_METRICS_URL"]
    assert url == "http://modelguard-context:8080/metrics"
    service = _by_kind(documents, "Service")["modelguard-context"]["spec"]
    assert _selects(service, context["metadata"]["labels"]) and service["ports"][0]["port"] == 8080
    assert {"name": "health", "containerPort": 8080} in context["spec"]["containers"][0]["ports"]
    policies = _by_kind(documents, "NetworkPolicy")
    allowed = policies["modelguard-console-context"]["spec"]
    assert _selects(allowed["podSelector"], console["metadata"]["labels"])
    [egress] = allowed["egress"]
    assert _selects(egress["to"][0]["podSelector"], context["metadata"]["labels"])
    assert egress["ports"] == [{"port": 8080, "protocol": "TCP"}]
    kafka = policies["modelguard-kafka"]["spec"]["podSelector"]
    assert not _selects(kafka, console["metadata"]["labels"]), "the console reads no topic"
    assert all(
        _selects(kafka, deployments[f"modelguard-{s}"]["spec"]["template"]["metadata"]["labels"]) for s in SERVICES
    )
    secured = _by_kind(_rendered("secured-kafka"), "Deployment")["modelguard-console"]["spec"]["template"]["spec"]
    assert not any("secret" in v for v in secured["volumes"]), "no Kafka credential in the console's pod"


def test_keys_and_tokens_come_from_secrets_and_configuration_from_configmaps() -> None:
    documents = _rendered("default")
    assert "Secret" not in {d["kind"] for d in documents}, "Secrets are created by the operator, not shipped"
    referenced: set[str] = set()
    for deployment in _by_kind(documents, "Deployment").values():
        pod = deployment["spec"]["template"]["spec"]
        for env in pod["containers"][0]["env"]:
            if "valueFrom" in env:
                referenced.add(env["valueFrom"]["secretKeyRef"]["name"])
            else:
                assert not any(word in env["name"] for word in ("TOKEN", "PASSWORD", "LEDGER_URL")), env
        referenced |= {v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    assert referenced == SECRETS
    documented = (REPO_ROOT / "docs" / "deploy.md").read_text()
    assert all(name in documented for name in SECRETS if not name.startswith("modelguard-key-"))
    config = _by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
    assert not any(word in key for key in config for word in ("TOKEN", "PASSWORD", "SECRET"))
    [policies] = [d for n, d in _by_kind(documents, "ConfigMap").items() if n.startswith("modelguard-policies")]
    for name, text in policies["data"].items():
        assert parse_policy(text.encode(), name).gate.metric
    detector = _by_kind(documents, "Deployment")["modelguard-detector"]["spec"]["template"]["spec"]["volumes"]
    assert {v["name"]: v for v in detector}["policies"]["configMap"]["name"] == policies["metadata"]["name"]


def test_the_network_is_denied_by_default_and_opened_per_need() -> None:
    policies = _by_kind(_rendered("default"), "NetworkPolicy")
    deny = policies["modelguard-default-deny"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    ingest = policies["modelguard-ingest"]["spec"]
    assert ingest["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "modelguard-detector"}
    assert ingest["ingress"] == [{"ports": [{"port": 8088, "protocol": "TCP"}]}]
    service = _by_kind(_rendered("default"), "Service")["modelguard-ingest"]["spec"]
    assert service["selector"] == ingest["podSelector"]["matchLabels"]


def test_keda_scales_on_the_lag_of_each_services_consumer_group() -> None:
    documents = _rendered("with-keda")
    deployments = _by_kind(documents, "Deployment")
    config = _by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
    scaled = _by_kind(documents, "ScaledObject")
    assert "replicas" not in deployments["modelguard-ledger"]["spec"], "KEDA owns the ledger's replica count"
    groups = set()
    for name, scaled_object in scaled.items():
        spec = scaled_object["spec"]
        assert spec["scaleTargetRef"]["name"] == name and name in deployments
        volumes = deployments[name]["spec"]["template"]["spec"]["volumes"]
        stateful = any("persistentVolumeClaim" in v for v in volumes if v["name"] == "state")
        assert (spec["maxReplicaCount"] == 1) if stateful else (spec["maxReplicaCount"] > 1), name
        for trigger in spec["triggers"]:
            assert trigger["metadata"]["bootstrapServers"] == config["MODELGUARD_KAFKA_BOOTSTRAP"]
            groups.add(trigger["metadata"]["consumerGroup"])
    assert "modelguard-detector" not in scaled, "the detector serves CI's HTTP and never scales to zero"
    assert groups == {f"modelguard-{s}" for s in SERVICES if s != "detector"} | {"modelguard-context-datahub-mcl"}


def test_the_topics_live_where_the_configured_kafka_cluster_is() -> None:
    config = _documents((DEPLOY / "kubernetes" / "config.yaml").read_text())[0]["data"]
    cluster_host = config["MODELGUARD_KAFKA_BOOTSTRAP"].split(":")[0]  # <cluster>-kafka-bootstrap.<namespace>
    for topic in _documents((DEPLOY / "kubernetes" / "topics.yaml").read_text()):
        namespace, cluster = topic["metadata"]["namespace"], topic["metadata"]["labels"]["strimzi.io/cluster"]
        assert cluster_host == f"{cluster}-kafka-bootstrap.{namespace}"


def test_the_example_policy_is_what_stack_up_installs_for_its_bundle() -> None:
    """The shipped example follows the central policy and the bundle: a new policy section cannot be forgotten."""
    shipped = yaml.safe_load((DEPLOY / "kubernetes" / "policies" / "churn-monthly-spend.yaml").read_text())
    bundle = load_bundle(REPO_ROOT / "fixtures" / "scenarios" / "churn-monthly-spend")
    assert shipped == effective_policy(bundle, read_central_policy())


def test_the_service_monitor_scrapes_every_services_pods_on_their_health_port() -> None:
    documents = _rendered("with-monitoring")
    deployments, services = _by_kind(documents, "Deployment"), _by_kind(documents, "Service")
    [monitor] = _by_kind(documents, "ServiceMonitor").values()
    wanted = monitor["spec"]["selector"]["matchLabels"]
    scraped = {
        name: service
        for name, service in services.items()
        if wanted.items() <= service["metadata"]["labels"].items()
        and service["metadata"]["namespace"] in monitor["spec"]["namespaceSelector"]["matchNames"]
    }
    [endpoint] = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    reached = set()
    for service in scraped.values():
        [port] = [p for p in service["spec"]["ports"] if p["name"] == endpoint["port"]]
        for name, deployment in deployments.items():
            pod = deployment["spec"]["template"]
            if service["spec"]["selector"].items() <= pod["metadata"]["labels"].items():
                ports = {p["name"] for c in pod["spec"]["containers"] for p in c.get("ports", [])}
                assert port["targetPort"] in ports, name
                reached.add(name)
        assert service["spec"]["clusterIP"] == "None"  # headless: every pod is scraped, not one behind a VIP
    assert reached == {f"modelguard-{s}" for s in SERVICES}  # the seven, not the runner (it serves no /metrics)
    job_names = {d["metadata"]["labels"][monitor["spec"]["jobLabel"]] for d in scraped.values()}
    assert job_names == {f"modelguard-{s}" for s in SERVICES}


def test_the_alerts_read_metrics_the_services_serve() -> None:
    from libs.bus.consumer_lag import CONSUMER_LAG
    from libs.bus.prometheus import DEAD_LETTERS

    [rules] = _by_kind(_rendered("with-monitoring"), "PrometheusRule").values()
    exprs = " ".join(rule["expr"] for group in rules["spec"]["groups"] for rule in group["rules"])
    served = {"modelguard_incidents_stuck", f"{DEAD_LETTERS}_total", CONSUMER_LAG, "up"}
    named = set(re.findall(r"\b(modelguard_[a-z_]+|up)\{?", exprs))
    assert named and named <= served
