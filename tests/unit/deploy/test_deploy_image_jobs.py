"""The deployment of workspace Jobs (the Helm chart's templates/image-jobs.yaml with ``imageJobs.enabled``, the
example deploy/helm/examples/with-image-jobs.yaml): valid Kubernetes 1.30; the namespace enforces Pod Security
``restricted`` and denies every egress; the Job pods' account has no role; the callers' one Role grants exactly the
API calls the backend makes and nothing else; only the diagnoser, the validator and the detector get it (and the
token it needs), and only they reach the Job pods; the names the backend's defaults use are the names deployed; off
by default; values that cannot work refused.

The chart is rendered by a real helm (tests/support/helm.py); tests/unit/deploy/test_helm_chart.py also lints the
example and validates every object of its render."""

from __future__ import annotations

from typing import Any

from libs.sandbox.job.manifest import APP
from libs.sandbox.job.pod import DEFAULT_PORT
from libs.sandbox.job.settings import ImageJobSettings
from tests.support.helm import NAMESPACE, example, render, render_error
from tests.support.kubernetes_schemas import problems as kubernetes_problems

CALLERS = {"modelguard-diagnoser", "modelguard-validator", "modelguard-detector"}
BACKEND_CALLS = {("batch", "jobs", "create"), ("batch", "jobs", "delete"), ("", "pods", "list")}
"""What libs/sandbox/job/kube_api.py does: POST a Job, DELETE it, GET the pods by label (a list)."""
ENABLED = ("--set", "imageJobs.enabled=true")
EXAMPLE = example("with-image-jobs.yaml")


def _key(document: dict[str, Any]) -> tuple[str, str, str]:
    return document["kind"], document["metadata"].get("namespace", ""), document["metadata"]["name"]


def _objects(*args: str) -> list[dict[str, Any]]:
    """The objects imageJobs.enabled adds to the release (the three callers' Deployments change; see below)."""
    before = {_key(d) for d in render(*args)}
    return [d for d in render(*args, *ENABLED) if _key(d) not in before]


def _of(kind: str, documents: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in documents if d["kind"] == kind}


def test_every_object_is_valid_kubernetes_1_30() -> None:
    documents = _objects()
    assert {d["kind"] for d in documents} == {
        "Namespace",
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ResourceQuota",
        "NetworkPolicy",
    }
    assert [p for d in documents for p in kubernetes_problems(d)] == []


def test_the_namespace_enforces_restricted_and_denies_every_egress() -> None:
    documents = _objects()
    settings = ImageJobSettings()
    [(_, name)] = _of("Namespace", documents)
    assert name == settings.namespace
    labels = _of("Namespace", documents)[("", name)]["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    in_jobs = [p for (namespace, _), p in _of("NetworkPolicy", documents).items() if namespace == name]
    assert any(
        p["spec"]["podSelector"] == {} and set(p["spec"]["policyTypes"]) == {"Ingress", "Egress"} for p in in_jobs
    )
    assert all("egress" not in p["spec"] for p in in_jobs), "no egress rule at all: not DNS, not the API"
    [ingress] = [rule for p in in_jobs for rule in p["spec"].get("ingress", [])]
    assert settings.port == DEFAULT_PORT
    assert [port["port"] for port in ingress["ports"]] == [DEFAULT_PORT]
    [source] = ingress["from"]
    assert source["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": NAMESPACE}}
    assert set(source["podSelector"]["matchExpressions"][0]["values"]) == CALLERS
    assert [p["spec"]["podSelector"] for p in in_jobs if "ingress" in p["spec"]] == [
        {"matchLabels": {"app.kubernetes.io/name": APP}}
    ]


def test_the_job_pods_account_has_no_role_and_the_callers_only_what_the_backend_calls() -> None:
    documents = render(*ENABLED)
    settings = ImageJobSettings()
    accounts = _of("ServiceAccount", documents)
    assert accounts[(settings.namespace, settings.service_account)]["automountServiceAccountToken"] is False
    assert accounts[(NAMESPACE, "modelguard-job-launcher")]["automountServiceAccountToken"] is False, (
        "mounted only in the three pods that ask for it"
    )
    bindings = _of("RoleBinding", documents)
    bound = {(s["namespace"], s["name"]) for b in bindings.values() for s in b["subjects"]}
    assert (settings.namespace, settings.service_account) not in bound
    assert bound == {(NAMESPACE, "modelguard-job-launcher")}
    assert not _of("ClusterRoleBinding", documents) and not _of("ClusterRole", documents)
    [role] = _of("Role", documents).values()
    assert role["metadata"]["namespace"] == settings.namespace, "rights in the Jobs' namespace only"
    [binding] = bindings.values()
    assert binding["metadata"]["namespace"] == settings.namespace
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "modelguard-job-launcher",
    }
    granted = {
        (group, resource, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }
    assert granted >= BACKEND_CALLS
    assert {resource for _, resource, _ in granted} == {"jobs", "pods"}, "no Secret, no pods/exec, no pods/log"
    assert {verb for *_, verb in granted} <= {"create", "get", "list", "delete"}, "nothing patched or updated"
    [quota] = _of("ResourceQuota", documents).values()
    assert quota["metadata"]["namespace"] == settings.namespace
    assert quota["spec"]["hard"] == {"pods": "8", "count/jobs.batch": "16"}


def _env(pod: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e.get("value") for e in pod["containers"][0].get("env", [])}


def test_only_the_three_callers_get_the_launchers_account_and_the_job_backend() -> None:
    documents = render(*EXAMPLE)
    assert [p for d in documents if d["kind"] != "KafkaTopic" for p in kubernetes_problems(d)] == []
    settings = ImageJobSettings()
    deployments = _of("Deployment", documents)
    assert {name for (_, name) in deployments} >= CALLERS
    for (_, name), deployment in deployments.items():
        spec = deployment["spec"]["template"]["spec"]
        env = _env(spec)
        if name in CALLERS:
            assert spec["serviceAccountName"] == "modelguard-job-launcher" and spec["automountServiceAccountToken"]
            assert env["MODELGUARD_IMAGE_JOBS"] == "kubernetes" and env["MODELGUARD_JOB_HELPER_IMAGE"]
            assert env["MODELGUARD_RUNNER"], "models without an image still run in the workspace runner"
            assert env["MODELGUARD_JOB_NAMESPACE"] == settings.namespace
            assert env["MODELGUARD_JOB_SERVICE_ACCOUNT"] == settings.service_account
            assert env["MODELGUARD_JOB_PORT"] == str(settings.port)
        else:
            assert spec.get("serviceAccountName") != "modelguard-job-launcher", name
            assert "MODELGUARD_IMAGE_JOBS" not in env, name
            assert spec.get("automountServiceAccountToken") is False, name
    callers_out = [
        p
        for (namespace, _), p in _of("NetworkPolicy", documents).items()
        if namespace == NAMESPACE
        and any(
            peer.get("podSelector", {}).get("matchLabels") == {"app.kubernetes.io/name": APP}
            for rule in p["spec"].get("egress", [])
            for peer in rule.get("to", [])
        )
    ]
    [policy] = callers_out
    assert set(policy["spec"]["podSelector"]["matchExpressions"][0]["values"]) == CALLERS
    to_jobs, to_api = policy["spec"]["egress"]
    assert to_jobs["to"][0]["namespaceSelector"] == {"matchLabels": {"kubernetes.io/metadata.name": settings.namespace}}
    assert [port["port"] for port in to_jobs["ports"]] == [settings.port]
    assert to_api == {
        "to": [{"ipBlock": {"cidr": "10.0.0.10/32"}}, {"ipBlock": {"cidr": "10.0.0.11/32"}}],
        "ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}],
    }, "the API server's addresses are a value"
    [workspace] = [a for (ns, n), a in _of("ServiceAccount", documents).items() if n == settings.service_account]
    assert workspace["imagePullSecrets"] == [{"name": "model-registry"}], "the kubelet pulls a private model image"


def test_off_by_default_every_service_keeps_no_token_and_no_job_backend() -> None:
    documents = render()
    assert not _of("Role", documents) and not _of("RoleBinding", documents)
    assert ("", ImageJobSettings().namespace) not in _of("Namespace", documents)
    for (_, name), deployment in _of("Deployment", documents).items():
        spec = deployment["spec"]["template"]["spec"]
        assert spec["automountServiceAccountToken"] is False and "serviceAccountName" not in spec, name
        assert not any(variable.startswith("MODELGUARD_JOB") for variable in _env(spec)), name
        assert "MODELGUARD_IMAGE_JOBS" not in _env(spec), name


def test_the_values_set_the_names_ports_and_images_both_sides_use() -> None:
    documents = render(
        *ENABLED,
        "--set",
        "imageJobs.namespace=ml-jobs,imageJobs.port=9100,imageJobs.createNamespace=false",
        "--set",
        "imageJobs.helperImage=registry.example.com/modelguard@sha256:" + "a" * 64,
    )
    assert "ml-jobs" not in {name for (_, name) in _of("Namespace", documents)}, "createNamespace false: yours"
    env = _env(_of("Deployment", documents)[(NAMESPACE, "modelguard-validator")]["spec"]["template"]["spec"])
    assert env["MODELGUARD_JOB_NAMESPACE"] == "ml-jobs" and env["MODELGUARD_JOB_PORT"] == "9100"
    assert env["MODELGUARD_JOB_HELPER_IMAGE"] == "registry.example.com/modelguard@sha256:" + "a" * 64
    policies = _of("NetworkPolicy", documents)
    assert {ns for (ns, _) in policies if ns != NAMESPACE} >= {"ml-jobs"}
    ingress = policies[("ml-jobs", "modelguard-jobs-callers")]["spec"]["ingress"][0]
    egress = policies[(NAMESPACE, "modelguard-workspace-jobs")]["spec"]["egress"][0]
    assert ingress["ports"] == egress["ports"] == [{"port": 9100, "protocol": "TCP"}]
    assert {(ns, n) for (ns, n) in _of("Role", documents)} == {("ml-jobs", "modelguard-job-launcher")}
    default = _env(_of("Deployment", render(*ENABLED))[(NAMESPACE, "modelguard-detector")]["spec"]["template"]["spec"])
    assert default["MODELGUARD_JOB_HELPER_IMAGE"] == "modelguard:0.1.0", "the services' own image by default"


def test_values_that_cannot_work_are_refused() -> None:
    assert "imageJobs.namespace must not be the release's namespace" in render_error(
        *ENABLED, "--set", f"imageJobs.namespace={NAMESPACE}"
    )
    assert "imageJobs.namespace must not be runner.namespace" in render_error(
        *ENABLED, "--set", "imageJobs.namespace=modelguard-runner"
    )
    assert "imageJobs.namespace: Does not match pattern" in render_error(*ENABLED, "--set", "imageJobs.namespace=Jobs")
    assert "imageJobs.port: Must be less than or equal to 65535" in render_error("--set", "imageJobs.port=70000")
    assert "Additional property enable is not allowed" in render_error("--set", "imageJobs.enable=true")
