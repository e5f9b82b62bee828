"""The Helm chart (deploy/helm/modelguard), rendered by a real helm: `helm lint` clean with the default values and
each example; every object of every render valid against the Kubernetes 1.30 schemas (kubernetes-validate, offline,
strict: an unknown field fails); and what production needs: a Deployment per service with probes, requests,
non-root read-only pods, keys and tokens from Secrets (each service only its own key), configuration and policy in
ConfigMaps, topics from Strimzi or a Job with bounded dead letters, NetworkPolicies whose peers are values, KEDA and
monitoring as options; replicas, RollingUpdate and PodDisruptionBudgets only where the state is shared. Custom
resources (Strimzi's KafkaTopic, KEDA's ScaledObject, the Prometheus Operator's) are checked field by field, not
against their CRDs. Values that cannot work are refused by `helm template` with a message naming them."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from contracts.registry import DEAD_LETTER_TOPIC, all_topics
from libs.bundle.load import load_bundle
from libs.bus.topic_config import (
    DEAD_LETTER_RETENTION_BYTES,
    DEAD_LETTER_RETENTION_HOURS,
    EVENT_RETENTION_HOURS,
    HOUR_MS,
)
from libs.policy.effective import effective_policy, read_central_policy
from libs.policy.model_policy import parse_policy
from modelguard.stack import REPO_ROOT, SERVICES
from tests.support.helm import CHART, EXAMPLES, NAMESPACE, by_kind, example, pods, render, render_error, run_helm
from tests.support.kubernetes_schemas import agrees_with_kubernetes_validate
from tests.support.kubernetes_schemas import problems as kubernetes_problems

CUSTOM_KINDS = {"KafkaTopic", "ScaledObject", "ServiceMonitor", "PrometheusRule"}
VARIANTS: dict[str, tuple[str, ...]] = {"default": ()}
VARIANTS |= {p.stem: example(p.name) for p in sorted(EXAMPLES.glob("*.yaml"))}
SECRETS = {f"modelguard-key-{s}" for s in (*SERVICES, "reporter")} | {
    "modelguard-ledger",
    "modelguard-ingest",
    "modelguard-datahub",
    "modelguard-publisher",
    "modelguard-console",
}


def _problems(document: dict[str, Any]) -> list[str]:
    if document["kind"] in CUSTOM_KINDS:
        return _custom_resource_problems(document)
    return kubernetes_problems(document)


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
        ok = ok and all(isinstance(v, int) for v in spec["config"].values())
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


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_helm_lint_passes(variant: str) -> None:
    done = run_helm("lint", str(CHART), "--strict", *VARIANTS[variant])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 chart(s) failed" in done.stdout


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_each_variant_renders_and_is_valid(variant: str) -> None:
    documents = render(*VARIANTS[variant])
    assert [p for d in documents for p in _problems(d)] == []
    kinds = [d["kind"] for d in documents]
    topics = sorted(d["spec"]["topicName"] for d in documents if d["kind"] == "KafkaTopic")
    jobs = [d for d in documents if d["kind"] == "Job"]
    if variant == "msk-without-strimzi":
        assert topics == [] and [j["spec"]["template"]["spec"]["containers"][0]["command"] for j in jobs] == [
            ["python", "-m", "libs.bus.topics_job"]
        ]
    else:
        assert topics == sorted(all_topics()) and jobs == []
    assert ("ScaledObject" in kinds) == (variant == "with-keda")
    assert ("ServiceMonitor" in kinds) == ("PrometheusRule" in kinds) == (variant == "with-monitoring")
    assert all(d["metadata"].get("namespace") for d in documents if d["kind"] != "Namespace"), "every object placed"


def test_the_validation_is_strict() -> None:
    deployment = by_kind(render(), "Deployment")["modelguard-ledger"]
    broken = copy.deepcopy(deployment)
    broken["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"]["paht"] = "/readyz"
    assert _problems(broken)
    broken = copy.deepcopy(deployment)
    broken["spec"]["replicas"] = "two"
    assert _problems(broken)
    for document in (deployment, broken):
        assert agrees_with_kubernetes_validate(document), "the cached validator is kubernetes-validate's"
    topic = next(d for d in render() if d["kind"] == "KafkaTopic")
    broken = copy.deepcopy(topic)
    broken["spec"]["config"]["retention.ms"] = "604800000"
    assert _problems(broken), "Strimzi's topic config takes numbers"


def test_every_service_runs_non_root_read_only_probed_and_with_requests() -> None:
    documents = render()
    deployments = by_kind(documents, "Deployment")
    config = by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
    claims = set(by_kind(documents, "PersistentVolumeClaim"))
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


def _restricted_problems(name: str, pod: dict[str, Any]) -> list[str]:
    """What the Pod Security Standard `restricted` forbids, as the admission controller checks it."""
    found = []
    security = pod.get("securityContext", {})
    if security.get("seccompProfile", {}).get("type") not in ("RuntimeDefault", "Localhost"):
        found.append(f"{name}: seccompProfile")
    if pod.get("hostUsers") is False or pod.get("hostNetwork") or pod.get("hostPID") or pod.get("hostIPC"):
        found.append(f"{name}: host namespaces")
    for container in pod["containers"]:
        context = container.get("securityContext", {})
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation")
        if context.get("capabilities", {}).get("drop") != ["ALL"] or context.get("capabilities", {}).get("add"):
            found.append(f"{name}: capabilities")
        if not (security.get("runAsNonRoot") or context.get("runAsNonRoot")) or context.get("privileged"):
            found.append(f"{name}: runAsNonRoot")
        if context.get("procMount", "Default") != "Default":
            found.append(f"{name}: procMount")
    allowed = {"configMap", "emptyDir", "persistentVolumeClaim", "secret", "projected", "downwardAPI", "csi"}
    found += [f"{name}: volume {v['name']}" for v in pod["volumes"] if not set(v) - {"name"} <= allowed]
    return found


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_pod_in_the_releases_namespace_meets_the_restricted_pod_security_standard(variant: str) -> None:
    documents = render(*VARIANTS[variant])
    workloads = [d for d in documents if d["kind"] in ("Deployment", "Job")]
    problems = [
        p
        for d in workloads
        if d["metadata"]["namespace"] == NAMESPACE
        for p in _restricted_problems(d["metadata"]["name"], d["spec"]["template"]["spec"])
    ]
    assert problems == []
    runner = by_kind(documents, "Deployment")["modelguard-runner"]
    assert _restricted_problems("runner", runner["spec"]["template"]["spec"]), "the check can fail"
    assert runner["metadata"]["namespace"] != NAMESPACE


def test_the_console_holds_no_signing_key_and_reads_the_artifacts_read_only() -> None:
    documents = render()
    pod = by_kind(documents, "Deployment")["modelguard-console"]["spec"]["template"]["spec"]
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
    service = by_kind(documents, "Service")["modelguard-console"]["spec"]
    assert service["selector"] == {"app.kubernetes.io/name": "modelguard-console"}
    database = by_kind(documents, "NetworkPolicy")["modelguard-database"]["spec"]["podSelector"]
    assert "modelguard-console" in database["matchExpressions"][0]["values"]


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """A label selector (matchLabels, matchExpressions with In / NotIn) as the API server evaluates it."""
    if any(labels.get(k) != v for k, v in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] in ("In", "NotIn"), expression
        present = labels.get(expression["key"]) in expression["values"]
        if present != (expression["operator"] == "In"):
            return False
    return True


def test_the_console_reaches_the_context_services_metrics_and_no_kafka() -> None:
    documents = render()
    deployments = by_kind(documents, "Deployment")
    console = deployments["modelguard-console"]["spec"]["template"]
    context = deployments["modelguard-context"]["spec"]["template"]
    [container] = console["spec"]["containers"]
    url = {e["name"]: e.get("value") for e in container["env"]}["MODELGUARD_CONSOLE_CONTEXT_METRICS_URL"]
    assert url == "http://modelguard-context:8080/metrics"
    service = by_kind(documents, "Service")["modelguard-context"]
    assert service["metadata"]["namespace"] == NAMESPACE
    spec = service["spec"]
    assert _selects({"matchLabels": spec["selector"]}, context["metadata"]["labels"])
    assert not _selects({"matchLabels": spec["selector"]}, console["metadata"]["labels"]), "the check can fail"
    [port] = spec["ports"]
    assert port["port"] == 8080
    assert {"name": "health", "containerPort": 8080} in context["spec"]["containers"][0]["ports"]
    assert port["targetPort"] == "health"
    assert "app.kubernetes.io/component" not in service["metadata"]["labels"], "not scraped twice by monitoring"
    policies = by_kind(documents, "NetworkPolicy")
    allowed = policies["modelguard-console-context"]["spec"]
    assert _selects(allowed["podSelector"], console["metadata"]["labels"])
    assert not _selects(allowed["podSelector"], context["metadata"]["labels"])
    [egress] = allowed["egress"]
    [peer] = egress["to"]
    assert set(peer) == {"podSelector"}, "the release's own namespace, the context pods only"
    assert _selects(peer["podSelector"], context["metadata"]["labels"])
    assert egress["ports"] == [{"port": 8080, "protocol": "TCP"}]
    for variant in sorted(VARIANTS):
        rendered = render(*VARIANTS[variant])
        labels = {n: d["spec"]["template"]["metadata"]["labels"] for n, d in by_kind(rendered, "Deployment").items()}
        kafka = by_kind(rendered, "NetworkPolicy")["modelguard-kafka"]["spec"]["podSelector"]
        assert not _selects(kafka, labels["modelguard-console"]), ("the console reads no topic", variant)
        assert all(_selects(kafka, labels[f"modelguard-{s}"]) for s in SERVICES), variant
    secured = render(*VARIANTS["secured-kafka"])
    pod = pods(secured)["modelguard-console"]
    assert not any("secret" in v for v in pod["volumes"]), "no Kafka credential in the console's pod"
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert not any("KAFKA" in name for name in env), "no Kafka password file, no Kafka certificate"
    assert any(
        v.get("secret", {}).get("secretName") == "modelguard-kafka"
        for v in pods(secured)["modelguard-ledger"]["volumes"]
    ), "the services get it: the check can fail"
    without = render("--set", "console.enabled=false")
    assert "modelguard-context" not in by_kind(without, "Service")
    assert "modelguard-console-context" not in by_kind(without, "NetworkPolicy")


def _secret_names(pod: dict[str, Any]) -> set[str]:
    [container] = pod["containers"]
    named = {e["valueFrom"]["secretKeyRef"]["name"] for e in container.get("env", []) if "valueFrom" in e}
    return named | {v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}


def test_keys_and_tokens_come_from_secrets_and_configuration_from_configmaps() -> None:
    documents = render()
    assert "Secret" not in {d["kind"] for d in documents}, "Secrets are created by the operator, not shipped"
    referenced: set[str] = set()
    for pod in pods(documents).values():
        for env in pod["containers"][0].get("env", []):
            if "valueFrom" not in env:
                assert not any(word in env["name"] for word in ("TOKEN", "PASSWORD", "LEDGER_URL")), env
        referenced |= _secret_names(pod)
    assert referenced == SECRETS
    documented = (REPO_ROOT / "docs" / "deploy.md").read_text()
    assert all(name in documented for name in SECRETS if not name.startswith("modelguard-key-"))
    config = by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
    assert not any(word in key for key in config for word in ("TOKEN", "PASSWORD", "SECRET"))
    policies = by_kind(documents, "ConfigMap")["modelguard-policies"]
    assert policies["data"], "the example policy is shipped"
    for name, text in policies["data"].items():
        assert parse_policy(text.encode(), name).gate.metric
    detector = pods(documents)["modelguard-detector"]["volumes"]
    assert {v["name"]: v for v in detector}["policies"]["configMap"]["name"] == "modelguard-policies"


def test_each_service_mounts_only_its_own_signing_key() -> None:
    for variant in ("default", "secured-kafka", "shared-state-s3"):
        for name, pod in pods(render(*VARIANTS[variant])).items():
            keys = {s for s in _secret_names(pod) if s.startswith("modelguard-key-")}
            own = name.removeprefix("modelguard-")
            expected = {f"modelguard-key-{own}"} if own in SERVICES else set()
            assert keys == expected | ({"modelguard-key-reporter"} if own == "detector" else set()), (variant, name)


def test_the_key_registry_given_as_a_value_is_a_configmap_that_rolls_every_pod_when_it_changes(
    tmp_path: Path,
) -> None:
    from libs.signing.key_store import KeyFiles, create_keys, rotate_key

    files = KeyFiles.in_dir(tmp_path)
    create_keys(files, [*SERVICES, "reporter"])
    before = render("--set-file", f"keys.registry={files.registry}")
    given = json.loads(files.registry.read_text())
    rotate_key(files, "diagnoser")
    after = render("--set-file", f"keys.registry={files.registry}")

    [registry] = [d for d in before if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "modelguard-key-registry"]
    assert json.loads(registry["data"]["registry.json"]) == given
    assert "PRIVATE" not in registry["data"]["registry.json"]

    def checksums(documents: list[dict[str, Any]]) -> dict[str, str]:
        return {
            name: d["spec"]["template"]["metadata"]["annotations"]["checksum/key-registry"]
            for name, d in by_kind(documents, "Deployment").items()
            if name != "modelguard-runner"
        }

    assert set(checksums(before)) == {f"modelguard-{s}" for s in SERVICES} | {"modelguard-console"}
    assert all(checksums(before)[n] != checksums(after)[n] for n in checksums(before)), "a rotation rolls every pod"
    assert "modelguard-key-registry" not in by_kind(render(), "ConfigMap"), "without the value: the operator's"
    private = tmp_path / "diagnoser.key"
    assert "holds a private key" in render_error("--set-file", f"keys.registry={private}")


def test_the_network_is_denied_by_default_and_opened_per_need() -> None:
    documents = render()
    policies = by_kind(documents, "NetworkPolicy")
    deny = policies["modelguard-default-deny"]["spec"]
    assert deny == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    ingest = policies["modelguard-ingest"]["spec"]
    assert ingest["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "modelguard-detector"}
    assert ingest["ingress"] == [{"ports": [{"port": 8088, "protocol": "TCP"}]}]
    service = by_kind(documents, "Service")["modelguard-ingest"]["spec"]
    assert service["selector"] == ingest["podSelector"]["matchLabels"]
    kafka = policies["modelguard-kafka"]["spec"]
    [expression] = kafka["podSelector"]["matchExpressions"]
    assert set(expression["values"]) == {f"modelguard-{s}" for s in SERVICES} | {"modelguard-topics"}
    assert "modelguard-s3" not in policies, "no S3 egress without an S3 artifact store"


def _egress(documents: list[dict[str, Any]], name: str) -> dict[str, Any]:
    [rule] = by_kind(documents, "NetworkPolicy")[name]["spec"]["egress"]
    return rule


def test_the_network_policy_peers_are_values() -> None:
    documents = render(*VARIANTS["shared-state-s3"])
    assert _egress(documents, "modelguard-database") == {
        "to": [{"ipBlock": {"cidr": "10.30.0.0/24"}}],
        "ports": [{"port": 5432, "protocol": "TCP"}],
    }
    assert _egress(documents, "modelguard-s3") == {
        "to": [{"ipBlock": {"cidr": "52.218.0.0/17"}}],
        "ports": [{"port": 443, "protocol": "TCP"}],
    }
    s3 = by_kind(documents, "NetworkPolicy")["modelguard-s3"]["spec"]["podSelector"]["matchExpressions"][0]
    assert set(s3["values"]) == {f"modelguard-{s}" for s in SERVICES if s != "ledger"} | {"modelguard-console"}
    msk = render(*VARIANTS["msk-without-strimzi"])
    assert _egress(msk, "modelguard-kafka") == {
        "to": [{"ipBlock": {"cidr": "10.20.0.0/16"}}],
        "ports": [{"port": 9096, "protocol": "TCP"}],
    }
    secured = render(*VARIANTS["secured-kafka"])
    assert _egress(secured, "modelguard-datahub-kafka")["to"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "datahub"}}}
    ]
    anywhere = render("--set", "networkPolicy.datahub.to=null")
    assert "to" not in _egress(anywhere, "modelguard-datahub"), "an empty peer list: any destination"


def test_replicas_rolling_updates_and_disruption_budgets_only_where_the_state_is_shared() -> None:
    local, shared = render(), render(*VARIANTS["shared-state-s3"])
    budgets = by_kind(local, "PodDisruptionBudget")
    assert set(budgets) == {"modelguard-ledger"}, "only the ledger runs two pods with per-service claims"
    for name, deployment in by_kind(shared, "Deployment").items():
        spec = deployment["spec"]
        assert spec["replicas"] == 2 and spec["strategy"]["type"] == "RollingUpdate", name
        assert spec["strategy"]["rollingUpdate"] == {"maxUnavailable": 0, "maxSurge": 1}, name
        budget = by_kind(shared, "PodDisruptionBudget")[name]
        assert budget["spec"]["selector"] == spec["selector"] and budget["spec"]["maxUnavailable"] == 1
    assert not by_kind(shared, "PersistentVolumeClaim"), "no claim: state in PostgreSQL, artifacts in S3"
    for service in SERVICES:
        pod = pods(shared)[f"modelguard-{service}"]
        env = {e["name"]: e for e in pod["containers"][0]["env"]}
        assert env["MODELGUARD_STATE_URL"]["valueFrom"]["secretKeyRef"] == {"name": "modelguard-ledger", "key": "url"}
        assert {v["name"]: v for v in pod["volumes"]}["state"] == {"name": "state", "emptyDir": {}}
    database = by_kind(shared, "NetworkPolicy")["modelguard-database"]["spec"]["podSelector"]["matchExpressions"][0]
    assert set(database["values"]) >= {f"modelguard-{s}" for s in SERVICES}, "every service reaches its state"


WORKSPACE_SERVICES = ("detector", "diagnoser", "repairer", "validator")


@pytest.mark.parametrize("medium", ["", "Memory"])
def test_workspaces_are_laid_out_in_the_pods_tmp_never_on_the_state_claim(medium: str) -> None:
    """MODELGUARD_SCRATCH_DIR is a folder of /tmp (an emptyDir) for the services that lay out workspaces;
    ``scratch.medium: Memory`` makes that emptyDir a memory filesystem bounded by ``scratch.sizeLimit``."""
    rendered = render("--set", f"scratch.medium={medium}", "--set", "scratch.sizeLimit=3Gi")
    for service in SERVICES:
        pod = pods(rendered)[f"modelguard-{service}"]
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        mounts = {m["name"]: m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
        tmp = {v["name"]: v for v in pod["volumes"]}["tmp"]["emptyDir"]
        if service in WORKSPACE_SERVICES:
            assert env["MODELGUARD_SCRATCH_DIR"] == "/tmp/modelguard-scratch" and mounts["tmp"] == "/tmp", service
        else:
            assert "MODELGUARD_SCRATCH_DIR" not in env, service
        assert tmp == ({"medium": "Memory", "sizeLimit": "3Gi"} if medium else {}), service


@pytest.mark.parametrize("medium", ["", "Memory"])
def test_the_runner_lays_out_each_command_in_its_tmp_on_disk_or_in_memory(medium: str) -> None:
    """The runner's /tmp (each command's revision, inputs and outputs) is an emptyDir bounded by ``runner.tmpSize``;
    ``runner.tmpMedium: Memory`` makes it a memory filesystem, as ``scratch.medium`` does for the services."""
    rendered = render("--set", f"runner.tmpMedium={medium}", "--set", "runner.tmpSize=6Gi")
    pod = by_kind(rendered, "Deployment")["modelguard-runner"]["spec"]["template"]["spec"]
    mounts = {m["name"]: m["mountPath"] for m in pod["containers"][0]["volumeMounts"]}
    tmp = {v["name"]: v for v in pod["volumes"]}["tmp"]["emptyDir"]
    assert mounts["tmp"] == "/tmp"
    assert tmp == ({"medium": "Memory", "sizeLimit": "6Gi"} if medium else {"sizeLimit": "6Gi"})


def test_a_runner_tmp_medium_other_than_disk_or_memory_is_refused() -> None:
    assert "tmpMedium" in render_error("--set", "runner.tmpMedium=HugePages")


@pytest.mark.parametrize("service", [s for s in SERVICES if s != "ledger"])
def test_two_replicas_of_a_service_with_a_readwriteonce_claim_are_refused(service: str) -> None:
    error = render_error("--set", f"services.{service}.replicas=2")
    assert f"services.{service}.replicas is 2, but with state.mode local" in error
    assert "set state.mode to ledger or secret" in error


def test_the_artifacts_go_to_s3_with_credentials_as_files_and_no_claim() -> None:
    documents = render(*VARIANTS["shared-state-s3"])
    config = by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
    assert config["MODELGUARD_ARTIFACTS_URL"] == "s3://acme-modelguard/artifacts"
    assert config["AWS_REGION"] == "eu-west-1" and "MODELGUARD_S3_ENDPOINT_URL" not in config
    for name, pod in pods(documents).items():
        [container] = pod["containers"]
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
        volumes = {v["name"]: v for v in pod["volumes"]}
        reads_artifacts = name not in ("modelguard-ledger", "modelguard-runner")
        assert ("s3" in volumes) is reads_artifacts, name
        if reads_artifacts:
            assert volumes["s3"]["secret"]["secretName"] == "modelguard-s3"
            assert env["AWS_ACCESS_KEY_ID_FILE"] == f"{mounts['s3']}/access-key-id"
            assert env["AWS_SECRET_ACCESS_KEY_FILE"] == f"{mounts['s3']}/secret-access-key"
        assert not any(k in env for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")), name
    minio = render("--set", "artifacts.url=s3://bucket/p", "--set", "artifacts.endpointUrl=http://minio.minio:9000")
    assert by_kind(minio, "ConfigMap")["modelguard-config"]["data"]["MODELGUARD_S3_ENDPOINT_URL"] == (
        "http://minio.minio:9000"
    )
    assert "artifacts.url: Does not match pattern" in render_error("--set", "artifacts.url=/mnt/artifacts")


def test_topic_retention_is_bounded_for_dead_letters_and_a_value_per_topic() -> None:
    topics = {d["spec"]["topicName"]: d for d in render() if d["kind"] == "KafkaTopic"}
    assert set(topics) == set(all_topics())
    dead = topics[DEAD_LETTER_TOPIC]["spec"]["config"]
    assert dead["retention.ms"] == DEAD_LETTER_RETENTION_HOURS * HOUR_MS
    assert dead["retention.bytes"] == DEAD_LETTER_RETENTION_BYTES
    events = {t: d["spec"]["config"]["retention.ms"] for t, d in topics.items() if t != DEAD_LETTER_TOPIC}
    assert set(events.values()) == {EVENT_RETENTION_HOURS * HOUR_MS}, "the chart's default is the code's"
    assert all(d["spec"]["config"]["min.insync.replicas"] == 2 for d in topics.values())
    overridden = render("--set", "topics.overrides.modelguard\\.published\\.v1.retentionHours=-1")
    published = next(d for d in overridden if d["kind"] == "KafkaTopic" and "published" in d["spec"]["topicName"])
    assert published["spec"]["config"]["retention.ms"] == -1
    assert "topics.deadLetter.retentionHours: Must be greater than or equal to 1" in render_error(
        "--set", "topics.deadLetter.retentionHours=-1"
    )
    assert "topics.deadLetter.retentionBytes: Must be greater than or equal to 1" in render_error(
        "--set", "topics.deadLetter.retentionBytes=0"
    )
    forever = "topics.overrides.modelguard\\.dead-letter\\.v1.retentionHours=-1"
    assert "must be bounded" in render_error("--set", forever)
    assert "not one of ModelGuard's topics" in render_error("--set", "topics.overrides.nope.retentionHours=1")


def test_the_topic_job_gets_the_same_configs_as_strimzi_would(tmp_path: Path) -> None:
    from libs.bus.topic_config import read_topic_configs

    documents = render(*VARIANTS["msk-without-strimzi"])
    [job] = [d for d in documents if d["kind"] == "Job"]
    config_map = by_kind(documents, "ConfigMap")["modelguard-topics"]
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    [mount] = [m for m in job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"] if m["name"] == "topics"]
    assert env["MODELGUARD_TOPIC_CONFIG_FILE"] == f"{mount['mountPath']}/topics.json"
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"
    strimzi = {d["spec"]["topicName"]: d["spec"]["config"] for d in render() if d["kind"] == "KafkaTopic"}
    shipped = json.loads(config_map["data"]["topics.json"])
    assert {t: {k: int(v) for k, v in c.items()} for t, c in shipped.items()} == strimzi
    path = tmp_path / "topics.json"
    path.write_text(config_map["data"]["topics.json"])
    assert read_topic_configs(path, all_topics()) == shipped, "the Job reads what the chart writes"


def test_the_example_policy_is_what_stack_up_installs_for_its_bundle() -> None:
    """The shipped example follows the central policy and the bundle: a new policy section cannot be forgotten."""
    shipped = yaml.safe_load((CHART / "policies" / "churn-monthly-spend.yaml").read_text())
    bundle = load_bundle(REPO_ROOT / "fixtures" / "scenarios" / "churn-monthly-spend")
    assert shipped == effective_policy(bundle, read_central_policy())
    rendered = by_kind(render(), "ConfigMap")["modelguard-policies"]["data"]["churn-monthly-spend.yaml"]
    assert yaml.safe_load(rendered) == shipped


def test_keda_scales_on_the_lag_of_each_services_consumer_group() -> None:
    documents = render(*VARIANTS["with-keda"])
    deployments = by_kind(documents, "Deployment")
    config = by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
    scaled = by_kind(documents, "ScaledObject")
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
    shared = render(*VARIANTS["with-keda"], "--set", "state.mode=ledger")
    assert all(s["spec"]["maxReplicaCount"] > 1 for s in by_kind(shared, "ScaledObject").values())
    assert "TriggerAuthentication" in render_error(*VARIANTS["with-keda"], *VARIANTS["secured-kafka"])


def test_the_service_monitor_scrapes_every_services_pods_on_their_health_port() -> None:
    documents = render(*VARIANTS["with-monitoring"])
    deployments, services = by_kind(documents, "Deployment"), by_kind(documents, "Service")
    [monitor] = by_kind(documents, "ServiceMonitor").values()
    assert monitor["metadata"]["labels"]["release"] == "prometheus", "the label your Prometheus selects by"
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

    [rules] = by_kind(render(*VARIANTS["with-monitoring"]), "PrometheusRule").values()
    exprs = " ".join(rule["expr"] for group in rules["spec"]["groups"] for rule in group["rules"])
    served = {"modelguard_incidents_stuck", f"{DEAD_LETTERS}_total", CONSUMER_LAG, "up"}
    named = set(re.findall(r"\b(modelguard_[a-z_]+|up)\{?", exprs))
    assert named and named <= served
    summaries = [r["annotations"]["summary"] for g in rules["spec"]["groups"] for r in g["rules"]]
    assert any("{{ $labels.job }}" in s for s in summaries), "Prometheus's templates survive helm's"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--set", "kafka.securityProtocol=SASL_SSL"), "kafka.sasl.mechanism must be PLAIN, SCRAM-SHA-256"),
        (
            ("--set", "kafka.securityProtocol=SASL_SSL", "--set", "kafka.sasl.mechanism=PLAIN"),
            "kafka.sasl.username is required with SASL_SSL",
        ),
        (
            ("--set", "kafka.securityProtocol=SASL_SSL,kafka.sasl.mechanism=PLAIN,kafka.sasl.username=u"),
            "kafka.secretName (the Secret with the SASL password) is required",
        ),
        (("--set", "kafka.tls.ca=true"), "kafka.tls is set but kafka.securityProtocol is PLAINTEXT"),
        (("--set", "kafka.securityProtocol=SCRAM"), "kafka.securityProtocol must be one of the following"),
        (("--set", "datahubKafka.enabled=true", "--set", "datahubKafka.sasl.username=u"), "datahubKafka.sasl is set"),
        (("--set", "state.mode=shared"), 'state.mode must be one of the following: "local", "ledger", "secret"'),
        (("--set", "servces.ledger.replicas=2"), "Additional property servces is not allowed"),
        (("--set", "services.ledger.replicas=0"), "services.ledger.replicas: Must be greater than or equal to 1"),
        (("--set", "datahubKafka.mclStart=2w"), "datahubKafka.mclStart: Does not match pattern"),
        (("--set", "schemaRegistry.auth=bearer"), "schemaRegistry.secretName is required"),
        (("--set", "config.extra.GITHUB_TOKEN=abc"), "looks like a secret"),
        (("--set", "runner.namespace=modelguard"), "runner.namespace must not be the release's namespace"),
    ],
)
def test_values_that_cannot_work_are_refused_with_a_message_naming_them(args: tuple[str, ...], message: str) -> None:
    assert message in render_error(*args)


@pytest.mark.parametrize("start", ["latest", "earliest", "24h", "7d", "90m", "1.5h", "2w", "soon", "-1h"])
def test_the_mcl_start_the_chart_takes_is_what_the_context_service_reads(start: str) -> None:
    from libs.bus.start_policy import StartPolicyError, parse_start_policy

    try:
        parse_start_policy(start)
        readable = True
    except StartPolicyError:
        readable = False
    if readable:
        config = by_kind(render("--set", f"datahubKafka.mclStart={start}"), "ConfigMap")["modelguard-config"]
        assert config["data"]["MODELGUARD_MCL_START"] == start
    else:
        assert "datahubKafka.mclStart" in render_error("--set", f"datahubKafka.mclStart={start}")
