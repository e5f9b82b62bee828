"""docs/deploy.md's Helm path, followed literally: the bash block of "Kubernetes with Helm" runs as written, with
bash, in a scratch folder. Only what needs a cluster is stood in for, by small programs on the PATH: `kubectl
create`/`label` record the Namespace, Secrets and ConfigMaps they would make (reading the files they name, so a
missing key file fails), and `helm upgrade --install` renders with `helm template` and the same arguments; `helm lint`
and `modelguard keys` are the real ones (`openssl rand` too, stood in for only where it is not installed). Then what
would be applied is checked: every object valid for Kubernetes 1.30, the namespace labelled restricted, and every
Secret and key the pods read created by the doc's commands, the signing keys matching the registry the release
carries. The section's block that gives the platform's central policy runs next, in the same folder: the real
`modelguard policy check-central` passes the policy it copied, and the release it upgrades to mounts that policy into
the seven services."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography.hazmat.primitives import serialization

from libs.signing.keys import KeyRegistry, key_id
from modelguard.stack import CLIENTS, REPO_ROOT, SERVICES
from tests.support.helm import by_kind, helm, helm_env
from tests.unit.deploy.test_helm_chart import _problems

DOC = REPO_ROOT / "docs" / "deploy.md"
SECTION = "## Kubernetes with Helm"

FAKE_KUBECTL = r"""
import json, os, sys
from pathlib import Path

args, namespace = sys.argv[1:], "default"
for flag in ("-n", "--namespace"):
    while flag in args:
        at = args.index(flag)
        namespace = args[at + 1]
        del args[at : at + 2]
record = Path(os.environ["DOC_RECORD"]) / "kubectl.jsonl"


def write(entry):
    with record.open("a") as out:
        out.write(json.dumps(entry) + "\n")


def data(items):
    found = {}
    for item in items:
        kind, _, rest = item.partition("=")
        key, _, value = rest.partition("=")
        if kind == "--from-literal":
            found[key] = value
        elif kind == "--from-file":
            found[key] = Path(value).read_text()  # a file the doc has not made fails here
        else:
            sys.exit(f"fake kubectl: {item} is not understood")
    return found


match args:
    case ["create", "namespace", name]:
        write({"kind": "Namespace", "name": name})
    case ["label", "namespace", name, *labels]:
        write({"kind": "Label", "name": name, "labels": dict(label.split("=", 1) for label in labels)})
    case ["create", "secret", "generic", name, *items]:
        write({"kind": "Secret", "name": name, "namespace": namespace, "data": data(items)})
    case ["create", "configmap", name, *items]:
        write({"kind": "ConfigMap", "name": name, "namespace": namespace, "data": data(items)})
    case _:
        sys.exit(f"fake kubectl: {' '.join(sys.argv[1:])} is not a command this test stands in for")
"""

FAKE_HELM = r"""
import os, subprocess, sys
from pathlib import Path

real, args = os.environ["REAL_HELM"], sys.argv[1:]
if args[:1] in (["lint"], ["template"]):
    sys.exit(subprocess.run([real, *args]).returncode)
if args[:2] == ["upgrade", "--install"]:
    done = subprocess.run([real, "template", *args[2:]], capture_output=True, text=True)
    sys.stderr.write(done.stderr)
    renders = Path(os.environ["DOC_RECORD"]) / "renders"
    renders.mkdir(exist_ok=True)
    number = len(list(renders.glob("*.yaml")))
    (renders / f"{number}.yaml").write_text(done.stdout)
    (renders / f"{number}.args").write_text("\n".join(args[2:]))
    sys.exit(done.returncode)
sys.exit(f"fake helm: {' '.join(args)} is not a command this test stands in for")
"""

FAKE_OPENSSL = r"""
import secrets, sys

if sys.argv[1:3] != ['rand', '-hex']:
    sys.exit(f"fake openssl: {' '.join(sys.argv[1:])} is not a command this test stands in for")
print(secrets.token_hex(int(sys.argv[3])))
"""

FAKE_MODELGUARD = r"""
import os, sys
os.execv(sys.executable, [sys.executable, "-m", "modelguard", *sys.argv[1:]])
"""


def _helm_blocks() -> list[str]:
    text = DOC.read_text()
    assert SECTION in text, f"docs/deploy.md has no {SECTION!r} section"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    assert blocks, "the Helm section has no bash block"
    return blocks


def _helm_block() -> str:
    return _helm_blocks()[0]


def _central_policy_block() -> str:
    [block] = [b for b in _helm_blocks() if "centralPolicy=" in b]
    return block


def _program(folder: Path, name: str, source: str) -> None:
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{source}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture(scope="module")
def followed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    real_helm = helm()
    work = tmp_path_factory.mktemp("helm-doc")
    (work / "deploy").symlink_to(REPO_ROOT / "deploy")
    (work / "policy").symlink_to(REPO_ROOT / "policy")
    record, fakes = work / ".record", work / ".bin"
    record.mkdir()
    fakes.mkdir()
    _program(fakes, "kubectl", FAKE_KUBECTL)
    _program(fakes, "helm", FAKE_HELM)
    _program(fakes, "modelguard", FAKE_MODELGUARD)
    if shutil.which("openssl") is None:  # a minimal CI image: the doc's tokens come from `openssl rand -hex 32`
        _program(fakes, "openssl", FAKE_OPENSSL)
    env = {
        **helm_env(),
        "PATH": f"{fakes}{os.pathsep}{os.environ['PATH']}",
        "DOC_RECORD": str(record),
        "REAL_HELM": real_helm,
        "PYTHONPATH": str(REPO_ROOT),
    }
    for name in [k for k in env if k.startswith("MODELGUARD_") and k != "MODELGUARD_REQUIRE_HELM"]:
        del env[name]
    env["MODELGUARD_HOME"] = str(work / "home")
    block = _helm_block()
    done = _bash(block, work, env)
    made = [json.loads(line) for line in (record / "kubectl.jsonl").read_text().splitlines()]
    [rendered] = sorted((record / "renders").glob("*.yaml"))
    args = (record / "renders" / "0.args").read_text().splitlines()
    documents = [d for d in yaml.safe_load_all(rendered.read_text()) if d]
    return {
        "block": block,
        "made": made,
        "documents": documents,
        "args": args,
        "work": work,
        "env": env,
        "out": done.stdout,
    }


def _bash(block: str, work: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=work, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"the doc's commands failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def central_policy_given(followed: dict[str, Any]) -> dict[str, Any]:
    """The block that gives the central policy, run after the install in the same folder (its keys, its values)."""
    work, block = followed["work"], _central_policy_block()
    done = _bash(block, work, followed["env"])
    renders = work / ".record" / "renders"
    assert len(list(renders.glob("*.yaml"))) == 2, "one more helm upgrade"
    args = (renders / "1.args").read_text().splitlines()
    documents = [d for d in yaml.safe_load_all((renders / "1.yaml").read_text()) if d]
    return {"block": block, "args": args, "documents": documents, "work": work, "out": done.stdout}


def test_the_doc_installs_the_chart_and_what_it_would_apply_is_valid(followed: dict[str, Any]) -> None:
    assert "helm upgrade --install modelguard deploy/helm/modelguard" in followed["block"]
    assert "helm lint deploy/helm/modelguard" in followed["block"]
    documents = followed["documents"]
    assert len(by_kind(documents, "Deployment")) == len(SERVICES) + 2  # the seven, the runner, the console
    assert [p for d in documents for p in _problems(d)] == []


def test_the_namespace_the_release_goes_to_is_made_and_labelled_restricted(followed: dict[str, Any]) -> None:
    args = followed["args"]
    namespace = args[args.index("--namespace") + 1]
    made = followed["made"]
    assert {"kind": "Namespace", "name": namespace} in made
    labels = {k: v for m in made if m["kind"] == "Label" and m["name"] == namespace for k, v in m["labels"].items()}
    assert labels == {"pod-security.kubernetes.io/enforce": "restricted"}
    placed = {d["metadata"]["namespace"] for d in followed["documents"] if d["kind"] in ("Deployment", "Secret")}
    assert namespace in placed


def _needed_secrets(documents: list[dict[str, Any]]) -> dict[tuple[str, str], set[str]]:
    """Every Secret the pods need, by (namespace, name), with the keys they read from it; optional ones left out."""
    needed: dict[tuple[str, str], set[str]] = {}
    for workload in (d for d in documents if d["kind"] in ("Deployment", "Job")):
        namespace, pod = workload["metadata"]["namespace"], workload["spec"]["template"]["spec"]
        volumes = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
        for container in pod["containers"]:
            mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"] if m["name"] in volumes}
            for name in mounts.values():
                needed.setdefault((namespace, name), set())
            for item in container.get("env", []):
                ref = item.get("valueFrom", {}).get("secretKeyRef")
                if ref and not ref.get("optional"):
                    needed.setdefault((namespace, ref["name"]), set()).add(ref["key"])
                for path, name in mounts.items():
                    if item.get("value", "").startswith(path + "/"):
                        needed[(namespace, name)].add(item["value"].removeprefix(path + "/"))
    return needed


def test_every_secret_and_key_the_pods_read_is_made_by_the_docs_commands(followed: dict[str, Any]) -> None:
    made = {(m["namespace"], m["name"]): m["data"] for m in followed["made"] if m["kind"] == "Secret"}
    needed = _needed_secrets(followed["documents"])
    assert {f"modelguard-key-{s}" for s in (*SERVICES, *CLIENTS)} <= {name for _, name in needed}
    missing = {f"{ns}/{name}": sorted(keys - set(made.get((ns, name), {}))) for (ns, name), keys in needed.items()}
    assert {k: v for k, v in missing.items() if v or k.split("/", 1)[1] not in {n for _, n in made}} == {}


def test_the_signing_keys_in_the_secrets_are_the_active_keys_of_the_registry_the_release_carries(
    followed: dict[str, Any],
) -> None:
    [registry_map] = [
        d
        for d in followed["documents"]
        if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "modelguard-key-registry"
    ]
    registry = KeyRegistry.from_document(json.loads(registry_map["data"]["registry.json"]))
    secrets = {m["name"]: m["data"] for m in followed["made"] if m["kind"] == "Secret"}
    for owner in (*SERVICES, *CLIENTS):
        pem = secrets[f"modelguard-key-{owner}"][f"{owner}.key"]
        private = serialization.load_pem_private_key(pem.encode(), password=None)
        registered = registry.get(key_id(private.public_key()))  # type: ignore[arg-type]
        assert registered is not None and registered.owner == owner and registered.active, owner
    assert "PRIVATE KEY" not in registry_map["data"]["registry.json"]
    keys = followed["work"] / "keys"
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in keys.glob("*.key"))
    assert "PRIVATE KEY" not in followed["out"] and base64.b64encode(b"-----BEGIN").decode() not in followed["out"]


def test_the_central_policy_the_doc_gives_is_the_one_the_seven_services_read(
    central_policy_given: dict[str, Any], followed: dict[str, Any]
) -> None:
    args, documents = central_policy_given["args"], central_policy_given["documents"]
    assert args[: len(followed["args"])] == followed["args"], "the same upgrade, and the central policy"
    assert args[len(followed["args"]) : -1] == ["--set-file"]
    given = central_policy_given["work"] / args[-1].removeprefix("centralPolicy=")
    assert given.read_text() == (REPO_ROOT / "policy" / "central.yaml").read_text(), "a copy of the image's own"
    config_maps = by_kind(documents, "ConfigMap")
    assert config_maps["modelguard-central-policy"]["data"] == {"central.yaml": given.read_text()}
    assert [p for d in documents for p in _problems(d)] == []
    for name, deployment in by_kind(documents, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        env = {e["name"]: e.get("value") for e in pod["containers"][0].get("env", [])}
        volumes = [v for v in pod["volumes"] if v.get("configMap", {}).get("name") == "modelguard-central-policy"]
        reads = name.removeprefix("modelguard-") in SERVICES
        assert bool(volumes) is reads and ("MODELGUARD_CENTRAL_POLICY" in env) is reads, name


def test_the_doc_checks_the_central_policy_before_the_upgrade_that_gives_it(
    central_policy_given: dict[str, Any],
) -> None:
    """`modelguard policy check-central` runs (the real one) on the copied file before `helm upgrade`; the block
    stops there when a service's reader would refuse it (bash -e)."""
    block, out = central_policy_given["block"], central_policy_given["out"]
    check = "modelguard policy check-central central-policy.yaml"
    assert check in block and block.index(check) < block.index("helm upgrade")
    assert re.search(r"^central-policy\.yaml: the \d+ readers of the central policy accept it$", out, re.M), out
