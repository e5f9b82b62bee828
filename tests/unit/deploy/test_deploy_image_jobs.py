"""The deployment of workspace Jobs (deploy/components/image-jobs, deploy/overlays/with-image-jobs): valid Kubernetes
1.30; the namespace enforces Pod Security ``restricted`` and denies every egress; the Job pods' account has no role;
the callers' one Role grants exactly the API calls the backend makes and nothing else; only the diagnoser, the
validator and the detector get it (and the token it needs), and only they reach the Job pods; the names the
backend's defaults use are the names deployed."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import kubernetes_validate
import pytest
import yaml

from libs.sandbox.job.manifest import APP
from libs.sandbox.job.pod import DEFAULT_PORT
from libs.sandbox.job.settings import ImageJobSettings
from modelguard.stack import REPO_ROOT

COMPONENT = REPO_ROOT / "deploy" / "components" / "image-jobs"
OVERLAY = REPO_ROOT / "deploy" / "overlays" / "with-image-jobs"
CALLERS = {"modelguard-diagnoser", "modelguard-validator", "modelguard-detector"}
BACKEND_CALLS = {("batch", "jobs", "create"), ("batch", "jobs", "delete"), ("", "pods", "list")}
"""What libs/sandbox/job/kube_api.py does: POST a Job, DELETE it, GET the pods by label (a list)."""


def _objects() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((COMPONENT / "image-jobs.yaml").read_text()) if d]


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
    for document in documents:
        kubernetes_validate.validate(document, "1.30.0", strict=True)


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
    assert set(source["podSelector"]["matchExpressions"][0]["values"]) == CALLERS
    assert [p["spec"]["podSelector"] for p in in_jobs if "ingress" in p["spec"]] == [
        {"matchLabels": {"app.kubernetes.io/name": APP}}
    ]


def test_the_job_pods_account_has_no_role_and_the_callers_only_what_the_backend_calls() -> None:
    documents = _objects()
    settings = ImageJobSettings()
    accounts = _of("ServiceAccount", documents)
    assert accounts[(settings.namespace, settings.service_account)]["automountServiceAccountToken"] is False
    bindings = _of("RoleBinding", documents)
    bound = {(s["namespace"], s["name"]) for b in bindings.values() for s in b["subjects"]}
    assert (settings.namespace, settings.service_account) not in bound
    assert bound == {("modelguard", "modelguard-job-launcher")}
    [role] = _of("Role", documents).values()
    assert role["metadata"]["namespace"] == settings.namespace, "rights in the Jobs' namespace only"
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


def _rendered() -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the overlay is not rendered")
    done = subprocess.run([kubectl, "kustomize", str(OVERLAY)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def test_only_the_three_callers_get_the_launchers_account_and_the_job_backend() -> None:
    documents = _rendered()
    for document in documents:
        if document["kind"] not in ("KafkaTopic",):
            kubernetes_validate.validate(document, "1.30.0", strict=True)
    for (_, name), deployment in _of("Deployment", documents).items():
        spec = deployment["spec"]["template"]["spec"]
        env = {e["name"]: e.get("value") for e in spec["containers"][0].get("env", [])}
        if name in CALLERS:
            assert spec["serviceAccountName"] == "modelguard-job-launcher" and spec["automountServiceAccountToken"]
            assert env["MODELGUARD_IMAGE_JOBS"] == "kubernetes" and env["MODELGUARD_JOB_HELPER_IMAGE"]
            assert env["MODELGUARD_RUNNER"], "models without an image still run in the workspace runner"
        else:
            assert spec.get("serviceAccountName") != "modelguard-job-launcher", name
            assert "MODELGUARD_IMAGE_JOBS" not in env, name
            assert spec.get("automountServiceAccountToken") is False, name
    callers_out = [
        p
        for (namespace, _), p in _of("NetworkPolicy", documents).items()
        if namespace == "modelguard"
        and any(
            peer.get("podSelector", {}).get("matchLabels") == {"app.kubernetes.io/name": APP}
            for rule in p["spec"].get("egress", [])
            for peer in rule.get("to", [])
        )
    ]
    [policy] = callers_out
    assert set(policy["spec"]["podSelector"]["matchExpressions"][0]["values"]) == CALLERS
