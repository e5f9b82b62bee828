"""The workspace runner's deployment (the Helm chart's templates/runner.yaml, docker-compose.yml): a pod that holds
nothing worth stealing (no Secret, no key registry, no service-account token, no service links), reaches nothing
(every egress denied) and is reached only by the services that run workspace code, the only pod with bubblewrap's
relaxed profile, probed; and the diagnoser, the validator and the detector pointed at it.

The chart is rendered by a real helm (tests/support/helm.py); tests/unit/deploy/test_helm_chart.py validates every
object against the Kubernetes 1.30 schemas."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
import yaml

from libs.settings import load_runner_settings
from modelguard.stack import REPO_ROOT, SERVICES
from tests.support.helm import NAMESPACE, render

COMPOSE = REPO_ROOT / "docker-compose.yml"
RUNNER = "modelguard-runner"
CALLERS = {"modelguard-diagnoser", "modelguard-validator", "modelguard-detector"}


def _base() -> list[dict[str, Any]]:
    return render()


def _of(kind: str, documents: list[dict[str, Any]] | None = None) -> dict[tuple[str, str], dict[str, Any]]:
    found = documents if documents is not None else _base()
    return {(d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in found if d["kind"] == kind}


def _deployments() -> dict[str, dict[str, Any]]:
    return {name: d for (_, name), d in _of("Deployment").items()}


def _runner_pod() -> dict[str, Any]:
    return _deployments()[RUNNER]["spec"]["template"]["spec"]


def _env(pod: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in pod["containers"][0].get("env", [])}


def test_the_runners_objects_are_valid_kubernetes_1_30() -> None:
    documents = [d for d in _base() if d["metadata"].get("namespace") == RUNNER or d["metadata"]["name"] == RUNNER]
    assert {d["kind"] for d in documents} == {"Namespace", "Deployment", "Service", "NetworkPolicy"}
    for document in documents:
        kubernetes_validate.validate(document, "1.30.0", strict=True)


def test_the_runner_pod_mounts_no_secret_and_has_no_service_account_token() -> None:
    deployment = _deployments()[RUNNER]
    pod = deployment["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert deployment["metadata"]["namespace"] == "modelguard-runner", "a namespace of its own, apart from the keys"
    assert container["command"] == ["python", "-m", "services.runner.main"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["enableServiceLinks"] is False, "no other Service's address in its environment"
    assert "envFrom" not in container, "not even the services' ConfigMap"
    assert all("valueFrom" not in e for e in container["env"]), "no value from a Secret (or anything else)"
    assert all(set(volume) == {"name", "emptyDir"} for volume in pod["volumes"]), "no Secret, ConfigMap or claim"
    assert not any(m["mountPath"].startswith("/etc/modelguard") for m in container["volumeMounts"])
    names = {e["name"] for e in container["env"]}
    assert not {"MODELGUARD_KAFKA_BOOTSTRAP", "MODELGUARD_LEDGER_URL", "MODELGUARD_SIGNING_KEY_FILE"} & names


def test_only_the_runner_gets_the_profile_bubblewrap_needs() -> None:
    pod = _runner_pod()
    security, container = pod["securityContext"], pod["containers"][0]["securityContext"]
    assert security["seccompProfile"] == {"type": "Unconfined"} and security["appArmorProfile"] == {
        "type": "Unconfined"
    }
    assert container["procMount"] == "Unmasked" and pod["hostUsers"] is False
    assert security["runAsNonRoot"] and security["runAsUser"] == 10001
    assert container["readOnlyRootFilesystem"] and not container["allowPrivilegeEscalation"]
    assert container["capabilities"] == {"drop": ["ALL"]}
    for name, deployment in _deployments().items():
        if name == RUNNER:
            continue
        spec = deployment["spec"]["template"]["spec"]
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert "appArmorProfile" not in spec["securityContext"] and "hostUsers" not in spec, name
        assert "procMount" not in spec["containers"][0]["securityContext"], name
    namespaces = {name: d["metadata"]["labels"] for (_, name), d in _of("Namespace").items()}
    # the release's own namespace is the operator's (helm install --namespace): docs/deploy.md labels it restricted,
    # and test_helm_chart.py checks every pod there against the restricted standard
    assert set(namespaces) == {RUNNER} and RUNNER != NAMESPACE
    assert namespaces["modelguard-runner"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_the_runner_is_probed_on_its_health_port() -> None:
    [container] = _runner_pod()["containers"]
    env, ports = _env(_runner_pod()), {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"health": int(env["MODELGUARD_HEALTH_PORT"]), "runner": int(env["MODELGUARD_RUNNER_PORT"])}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert container["startupProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert {m["mountPath"] for m in container["volumeMounts"]} == {"/tmp", env["MODELGUARD_HOME"]}


def _selects(policy: dict[str, Any], labels: dict[str, str]) -> bool:
    selector = policy["spec"]["podSelector"]
    if any(labels.get(key) != value for key, value in selector.get("matchLabels", {}).items()):
        return False
    for expression in selector.get("matchExpressions", []):
        assert expression["operator"] in ("In", "NotIn")
        if (labels.get(expression["key"]) in expression["values"]) != (expression["operator"] == "In"):
            return False
    return True


def test_the_runner_reaches_nothing_and_only_the_three_callers_reach_it() -> None:
    policies = _of("NetworkPolicy")
    labels = _deployments()[RUNNER]["spec"]["template"]["metadata"]["labels"]
    on_runner = [
        p for (namespace, _), p in policies.items() if namespace == "modelguard-runner" and _selects(p, labels)
    ]
    assert any(
        p["spec"]["podSelector"] == {} and set(p["spec"]["policyTypes"]) == {"Ingress", "Egress"} for p in on_runner
    )
    assert all("egress" not in p["spec"] for p in on_runner), "no egress rule at all: not DNS, not Kafka"
    rules = [rule for p in on_runner for rule in p["spec"].get("ingress", [])]
    by_port = {port["port"]: rule for rule in rules for port in rule["ports"]}
    assert set(by_port) == {8080, 8090}
    [source] = by_port[8090]["from"]
    assert source["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}}
    [expression] = source["podSelector"]["matchExpressions"]
    assert (expression["key"], set(expression["values"])) == ("app.kubernetes.io/name", CALLERS)
    assert "from" not in by_port[8080], "the probes come from the node"
    callers_out = [p for (namespace, _), p in policies.items() if namespace == NAMESPACE and "egress" in p["spec"]]
    for caller in CALLERS:
        caller_labels = _deployments()[caller]["spec"]["template"]["metadata"]["labels"]
        reach = [
            rule
            for p in callers_out
            if _selects(p, caller_labels)
            for rule in p["spec"]["egress"]
            for peer in rule.get("to", [])
            if peer.get("podSelector", {}).get("matchLabels") == {"app.kubernetes.io/name": RUNNER}
        ]
        assert [port["port"] for rule in reach for port in rule["ports"]] == [8090], caller


def test_the_services_that_run_workspace_code_point_at_the_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    [service] = [d for (namespace, name), d in _of("Service").items() if name == RUNNER]
    [port] = service["spec"]["ports"]
    assert service["spec"]["selector"] == {"app.kubernetes.io/name": RUNNER} and port["targetPort"] == "runner"
    url = f"http://{RUNNER}.{service['metadata']['namespace']}.svc:{port['port']}"
    for name, deployment in _deployments().items():
        env = _env(deployment["spec"]["template"]["spec"])
        assert env.get("MODELGUARD_RUNNER") == (url if name in CALLERS else None), name
    config = _of("ConfigMap")[("modelguard", "modelguard-config")]["data"]
    assert "MODELGUARD_RUNNER" not in config
    monkeypatch.setenv("MODELGUARD_RUNNER", url)
    assert load_runner_settings().url == url


# compose


def _compose() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


def test_the_compose_runner_holds_nothing_and_sits_on_an_internal_network() -> None:
    document = _compose()
    services, runner = document["services"], document["services"]["runner"]
    assert runner["command"] == ["python", "-m", "services.runner.main"]
    assert (runner["image"], runner["user"], runner["read_only"]) == ("modelguard:0.1.0", "10001:10001", True)
    assert "volumes" not in runner, "not the shared volume that holds the keys"
    assert set(runner["environment"]) <= {
        "MODELGUARD_RUNNER_PORT",
        "MODELGUARD_RUNNER_CONCURRENCY",
        "MODELGUARD_HEALTH_PORT",
    }
    assert runner["networks"] == ["workspace"] and document["networks"]["workspace"]["internal"] is True
    assert "/readyz" in " ".join(runner["healthcheck"]["test"])
    assert "depends_on" not in runner and "ports" not in runner
    on_workspace = {name for name, service in services.items() if "workspace" in service.get("networks", [])}
    assert on_workspace == {"runner", "diagnoser", "validator", "detector"}
    relaxed = {name for name, service in services.items() if "seccomp=unconfined" in service.get("security_opt", [])}
    assert relaxed == {"runner"}, "only the runner gets bubblewrap's profile"


def test_the_compose_services_that_run_workspace_code_use_the_runner() -> None:
    services = _compose()["services"]
    port = services["runner"]["environment"]["MODELGUARD_RUNNER_PORT"]
    for name in SERVICES:
        expected = f"http://runner:{port}" if name in ("diagnoser", "validator", "detector") else None
        assert services[name]["environment"].get("MODELGUARD_RUNNER") == expected, name
        if expected:
            assert services[name]["depends_on"]["runner"] == {"condition": "service_healthy"}
            assert set(services[name]["networks"]) == {"default", "workspace"}
