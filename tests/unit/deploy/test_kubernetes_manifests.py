"""The Kubernetes manifests run every service the stack runs, each with the state and keys it needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from modelguard.stack import REPO_ROOT, SERVICES

MANIFEST = REPO_ROOT / "deploy" / "kubernetes" / "services.yaml"


def _documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_every_service_has_a_deployment_with_its_own_key_state_and_existing_claims() -> None:
    documents = _documents(MANIFEST)
    claims = {d["metadata"]["name"] for d in documents if d["kind"] == "PersistentVolumeClaim"}
    deployments = {d["metadata"]["name"]: d for d in documents if d["kind"] == "Deployment"}
    assert set(deployments) == {f"modelguard-{s}" for s in SERVICES}
    for service in SERVICES:
        pod = deployments[f"modelguard-{service}"]["spec"]["template"]["spec"]
        [container] = pod["containers"]
        assert container["command"] == ["python", "-m", f"services.{service}.main"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        assert volumes["signing"]["secret"]["secretName"] == f"modelguard-key-{service}"
        assert volumes["state"]["persistentVolumeClaim"]["claimName"] == f"modelguard-state-{service}"
        used = {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v}
        assert used <= claims
        mounted = {m["name"] for m in container["volumeMounts"]}
        assert mounted == set(volumes)
