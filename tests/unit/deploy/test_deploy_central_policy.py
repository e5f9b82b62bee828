"""The platform's central policy given to the Helm chart (the value ``centralPolicy``, docs/deploy.md "Kubernetes with
Helm"): the ConfigMap modelguard-central-policy holds its text as given, mounted read-only into the seven services,
whose MODELGUARD_CENTRAL_POLICY names the mounted file and which roll when it changes; never into the console (it
reads no central policy) or the workspace runner (no ConfigMap at all). Without the value nothing of it is rendered.

The chart refuses a value of the wrong shape in one message: not one YAML mapping, or without a section the services
cannot do without. It refuses exactly the shapes the services' own readers of the central policy refuse, over the
repository's policy/central.yaml, that policy without each of its sections or with each one empty, and texts that
are not one mapping; what it renders, the readers read. A section's fields are the services' to check, not the
chart's.

The chart is rendered by a real helm (tests/support/helm.py); tests/unit/deploy/test_helm_chart.py validates the
renders of the default values and the examples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from libs.bundle.load import load_bundle
from libs.bus.delivery_policy import delivery_policy_from
from libs.datahub.mcl.intake_limits import central_mcl_limits
from libs.patch_guard.policy import load_central_policy
from libs.policy.central import read_central_policy_document
from libs.policy.diagnosis import central_diagnosis_policy
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.policy.model_policies.onboarding import central_onboarding
from libs.policy.model_policy import parse_policy
from libs.sandbox.job.image_policy import ImageRefused, check_image, default_image_policy, image_policy_from
from libs.sandbox.limits import read_sandbox_policy
from modelguard.cli import main
from modelguard.stack import REPO_ROOT, SERVICES
from tests.support.helm import CHART, NAMESPACE, by_kind, example, pods, render, render_error, run_helm
from tests.support.kubernetes_schemas import problems as kubernetes_problems
from tests.unit.cli.test_policy_check_central import BAD_FIELDS

POLICY = REPO_ROOT / "policy" / "central.yaml"
CHURN = REPO_ROOT / "fixtures" / "scenarios" / "churn-monthly-spend"
CONFIG_MAP = "modelguard-central-policy"
READERS = {f"modelguard-{s}" for s in SERVICES}
"""The pods that read the central policy: every service (each one's delivery section, libs/bus/runtime.py)."""
ALLOWED_IMAGE = "registry.example.com/ml/churn@sha256:" + "a" * 64


def _given(folder: Path, text: str, name: str = "central.yaml") -> tuple[str, str]:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return "--set-file", f"centralPolicy={path}"


def _readers_refusal(path: Path) -> str | None:
    """What the services' readers of the central policy say of the file at ``path``: None when every one reads it."""
    try:
        document = read_central_policy_document(path)
        load_central_policy(path)  # repair: the repairer's patch guard
        central_diagnosis_policy(path)
        read_sandbox_policy(path)
        image_policy_from(document.get("workspace_images"), str(path))
        delivery_policy_from(document.get("delivery"), str(path))
        central_onboarding(path)
        central_mcl_limits(path)
        # diagnosis, repair, sandbox, validation and ci, as a model's effective policy carries them
        parse_policy(effective_policy_bytes(load_bundle(CHURN), read_central_policy(path)), str(path))
    except ValueError as refusal:  # each reader's error, pydantic's ValidationError among them
        return str(refusal)
    return None


def _mounted(pod: dict[str, Any], config_map: str = CONFIG_MAP) -> dict[str, Any]:
    """Where the pod's one container finds the central policy: the env variable, the mount, the volume."""
    [container] = pod["containers"]
    env = {e["name"]: e for e in container.get("env", [])}
    volumes = {v["name"]: v for v in pod["volumes"] if v.get("configMap", {}).get("name") == config_map}
    mounts = [m for m in container.get("volumeMounts", []) if m["name"] in volumes]
    return {"env": env.get("MODELGUARD_CENTRAL_POLICY"), "mounts": mounts, "volumes": list(volumes.values())}


def test_without_the_value_nothing_of_a_central_policy_is_rendered() -> None:
    for args in ((), example("with-image-jobs.yaml"), ("--set", "centralPolicy=")):
        documents = render(*args)
        assert CONFIG_MAP not in by_kind(documents, "ConfigMap")
        for name, pod in pods(documents).items():
            assert _mounted(pod) == {"env": None, "mounts": [], "volumes": []}, name
        annotations = [
            d["spec"]["template"]["metadata"].get("annotations", {})
            for d in documents
            if "template" in d.get("spec", {})
        ]
        assert not any("checksum/central-policy" in a for a in annotations)
        config = by_kind(documents, "ConfigMap")["modelguard-config"]["data"]
        assert "MODELGUARD_CENTRAL_POLICY" not in config, "the services read the image's own policy/central.yaml"


def test_the_central_policy_is_a_configmap_mounted_read_only_into_every_service(tmp_path: Path) -> None:
    text = POLICY.read_text(encoding="utf-8")
    documents = render(*_given(tmp_path, text))
    config_map = by_kind(documents, "ConfigMap")[CONFIG_MAP]
    assert config_map["metadata"]["namespace"] == NAMESPACE
    assert config_map["data"] == {"central.yaml": text}, "the text as given, byte for byte"
    assert kubernetes_problems(config_map) == []
    deployments = by_kind(documents, "Deployment")
    for name in READERS:
        found = _mounted(deployments[name]["spec"]["template"]["spec"])
        [volume], [mount] = found["volumes"], found["mounts"]
        assert volume["configMap"] == {"name": CONFIG_MAP}, name
        assert mount["readOnly"] is True and "subPath" not in mount, name  # no subPath: the kubelet updates it
        assert found["env"] == {"name": "MODELGUARD_CENTRAL_POLICY", "value": f"{mount['mountPath']}/central.yaml"}
        hidden = read_sandbox_policy(POLICY).hidden
        assert any(Path(mount["mountPath"]).is_relative_to(h) for h in hidden), "hidden from workspace code"
        assert kubernetes_problems(deployments[name]) == [], name
    for name in set(deployments) - READERS:
        assert _mounted(deployments[name]["spec"]["template"]["spec"]) == {"env": None, "mounts": [], "volumes": []}
    assert set(deployments) - READERS == {"modelguard-console", "modelguard-runner"}


def test_a_central_policy_another_tool_manages_is_its_configmap_mounted_as_the_chart_s_would_be() -> None:
    # GitOps: the policy's ConfigMap is kept by another tool or team; the chart renders none and mounts that one
    theirs = "platform-central-policy"
    documents = render("--set", f"centralPolicyConfigMap={theirs}")
    assert CONFIG_MAP not in by_kind(documents, "ConfigMap") and theirs not in by_kind(documents, "ConfigMap")
    deployments = by_kind(documents, "Deployment")
    for name in READERS:
        template = deployments[name]["spec"]["template"]
        found = _mounted(template["spec"], theirs)
        [volume], [mount] = found["volumes"], found["mounts"]
        assert volume["configMap"] == {"name": theirs}, name
        assert mount["readOnly"] is True and "subPath" not in mount, name
        assert found["env"] == {"name": "MODELGUARD_CENTRAL_POLICY", "value": f"{mount['mountPath']}/central.yaml"}
        assert "checksum/central-policy" not in template["metadata"].get("annotations", {}), "its text is not known"
        assert kubernetes_problems(deployments[name]) == [], name
    for name in set(deployments) - READERS:
        assert _mounted(deployments[name]["spec"]["template"]["spec"], theirs)["volumes"] == [], name


def test_a_central_policy_given_both_as_text_and_as_a_configmap_is_refused(tmp_path: Path) -> None:
    given = _given(tmp_path, POLICY.read_text(encoding="utf-8"))
    [error] = [
        line
        for line in render_error(*given, "--set", "centralPolicyConfigMap=theirs").splitlines()
        if line.startswith("Error:")
    ]
    assert "centralPolicy" in error and "centralPolicyConfigMap" in error and "one" in error


def test_the_workspace_runner_still_gets_no_configmap(tmp_path: Path) -> None:
    documents = render(*_given(tmp_path, POLICY.read_text(encoding="utf-8")), *example("with-image-jobs.yaml"))
    runner = by_kind(documents, "Deployment")["modelguard-runner"]
    pod = runner["spec"]["template"]["spec"]
    [container] = pod["containers"]
    assert all(set(volume) == {"name", "emptyDir"} for volume in pod["volumes"]), "no Secret, ConfigMap or claim"
    assert "envFrom" not in container and not any("CENTRAL" in e["name"] for e in container["env"])
    assert "annotations" not in runner["spec"]["template"]["metadata"]
    assert runner["metadata"]["namespace"] != NAMESPACE


def test_a_changed_central_policy_rolls_the_services_that_read_it(tmp_path: Path) -> None:
    text = POLICY.read_text(encoding="utf-8")
    allowing = text.replace("workspace_images:\n  allowed: []", f"workspace_images:\n  allowed: [{ALLOWED_IMAGE}]")
    assert allowing != text

    def checksums(documents: list[dict[str, Any]]) -> dict[str, str | None]:
        return {
            name: d["spec"]["template"]["metadata"].get("annotations", {}).get("checksum/central-policy")
            for name, d in by_kind(documents, "Deployment").items()
        }

    before = checksums(render(*_given(tmp_path, text, "before.yaml")))
    after = checksums(render(*_given(tmp_path, allowing, "after.yaml")))
    assert {n for n, c in before.items() if c} == READERS, "the detector reads onboarding at start: it must roll"
    assert all(before[n] != after[n] for n in READERS)
    assert before["modelguard-console"] is None and before["modelguard-runner"] is None
    again = checksums(render(*_given(tmp_path, text, "again.yaml")))
    assert again == before, "the same policy: no roll"


def test_the_policy_the_chart_mounts_is_the_one_the_services_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A platform allowing its registry's images: the services, pointed where the chart points them, allow them."""
    text = POLICY.read_text(encoding="utf-8")
    allowing = text.replace(
        "workspace_images:\n  allowed: []", "workspace_images:\n  allowed: [registry.example.com/ml/]"
    )
    with pytest.raises(ImageRefused, match="allowed is empty"):
        check_image(ALLOWED_IMAGE, image_policy_from(yaml.safe_load(text)["workspace_images"]))
    documents = render(*_given(tmp_path, allowing), *example("with-image-jobs.yaml"))
    shipped = by_kind(documents, "ConfigMap")[CONFIG_MAP]["data"]["central.yaml"]
    env = _mounted(pods(documents)["modelguard-validator"])["env"]["value"]
    mounted = tmp_path / env.lstrip("/")
    mounted.parent.mkdir(parents=True)
    mounted.write_text(shipped, encoding="utf-8")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(mounted))
    assert check_image(ALLOWED_IMAGE, default_image_policy()) == ALLOWED_IMAGE
    assert _readers_refusal(mounted) is None


def test_helm_lint_passes_with_the_central_policy(tmp_path: Path) -> None:
    done = run_helm("lint", str(CHART), "--strict", *_given(tmp_path, POLICY.read_text(encoding="utf-8")))
    assert done.returncode == 0, done.stdout + done.stderr


NOT_ONE_MAPPING = {
    "a list": ("- repair: {}\n- diagnosis: {}\n", "centralPolicy is a YAML list, not a mapping"),
    "a single value": ("policy/central.yaml\n", "centralPolicy is a single value, not a mapping"),
    "a number": ("42\n", "centralPolicy is a single value, not a mapping"),
    "not YAML": ("repair: [1, 2\n", "centralPolicy is not YAML (yaml: line 1: did not find expected ',' or ']')"),
    "two documents": (POLICY.read_text(encoding="utf-8") + "---\nrepair: {}\n", "centralPolicy holds more than one"),
}


@pytest.mark.parametrize("shape", sorted(NOT_ONE_MAPPING))
def test_a_central_policy_that_is_not_one_yaml_mapping_is_refused_in_one_message(tmp_path: Path, shape: str) -> None:
    text, message = NOT_ONE_MAPPING[shape]
    [error] = [line for line in render_error(*_given(tmp_path, text)).splitlines() if line.startswith("Error:")]
    assert message in error
    assert "--set-file centralPolicy=" in error, "the message says what to give"


def test_a_central_policy_without_a_section_the_services_need_is_refused(tmp_path: Path) -> None:
    document = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    partial = yaml.safe_dump({"workspace_images": document["workspace_images"]})
    error = render_error(*_given(tmp_path, partial))
    assert "centralPolicy lacks the sections repair, diagnosis, mcl_intake:" in error
    assert "replaces the image's policy/central.yaml whole" in error


def _shapes() -> dict[str, str]:
    """The repository's central policy as given, written otherwise (indented, without a final newline...), without
    each section, with each one empty, and texts that are not one mapping."""
    text = POLICY.read_text(encoding="utf-8")
    document = yaml.safe_load(text)
    shapes = {"whole": text, "comments only": "# nothing yet\n", "null": "null\n"}
    shapes |= {f"{shape} (not one mapping)": given for shape, (given, _) in NOT_ONE_MAPPING.items()}
    for section in document:
        shapes[f"without {section}"] = yaml.safe_dump({k: v for k, v in document.items() if k != section})
        shapes[f"{section} empty"] = yaml.safe_dump({**document, section: {}})
    shapes["leading document marker"] = "---\n" + text
    shapes["no final newline"] = text.rstrip("\n")
    shapes["trailing spaces and blank lines"] = text.replace("repair:\n", "repair:  \n") + "\n\n \n"
    shapes["indented"] = "".join(f"  {line}" if line.strip() else line for line in text.splitlines(keepends=True))
    return shapes


def test_the_chart_refuses_exactly_the_shapes_the_services_readers_refuse(tmp_path: Path) -> None:
    shapes = _shapes()
    assert len(shapes) > 20
    disagreements, rendered = {}, 0
    for index, (shape, text) in enumerate(sorted(shapes.items())):
        source = tmp_path / f"{index}.yaml"
        source.write_text(text, encoding="utf-8")
        refusal = _readers_refusal(source)
        done = run_helm(
            "template", "modelguard", str(CHART), "--namespace", NAMESPACE, "--set-file", f"centralPolicy={source}"
        )
        if (done.returncode == 0) != (refusal is None):
            disagreements[shape] = refusal or done.stderr.strip()
            continue
        if done.returncode == 0:
            rendered += 1
            documents = [d for d in yaml.safe_load_all(done.stdout) if d]
            shipped = by_kind(documents, "ConfigMap")[CONFIG_MAP]["data"]["central.yaml"]
            assert shipped == text, f"{shape}: the text as given, byte for byte"
    assert disagreements == {}
    assert rendered >= 10, "the check can pass: whole policies and those without an optional section render"


def _check_central(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`modelguard policy check-central` of the file: its exit code and its report."""
    code = main(["policy", "check-central", str(path)])
    out, _ = capsys.readouterr()
    return code, out


def test_check_central_refuses_exactly_what_the_services_readers_refuse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The platform's check before `helm upgrade` says of every shape, and of a bad field in each section, what the
    readers say: it passes exactly the policies they read."""
    document = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    shapes = _shapes() | {
        f"bad {case}": yaml.safe_dump(document | change) for case, (change, _, _) in BAD_FIELDS.items()
    }
    disagreements = {}
    for index, (shape, text) in enumerate(sorted(shapes.items())):
        source = tmp_path / f"{index}.yaml"
        source.write_text(text, encoding="utf-8")
        code, out = _check_central(source, capsys)
        refusal = _readers_refusal(source)
        if (code == 0) != (refusal is None) or code not in (0, 1, 2):
            disagreements[shape] = (code, refusal, out)
    assert disagreements == {}


@pytest.mark.parametrize(
    ("section", "change", "reader"),
    [
        ("delivery", {"max_attempts": 0}, "every service, at its start"),
        ("sandbox", {"limits": {"wall_s": -1}}, "a workspace command's first run"),
        ("repair", {"max_changed_lines": 0}, "the first repair"),
    ],
)
def test_a_policy_the_chart_renders_but_a_service_refuses_is_caught_by_check_central(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], section: str, change: dict[str, Any], reader: str
) -> None:
    """The chart checks the policy's shape, not its fields: what it renders and mounts, a service refuses (at
    ``reader``). The check run before `helm upgrade` names the section."""
    document = yaml.safe_load(POLICY.read_text(encoding="utf-8"))
    text = yaml.safe_dump(document | {section: document[section] | change})
    documents = render(*_given(tmp_path, text))
    assert by_kind(documents, "ConfigMap")[CONFIG_MAP]["data"]["central.yaml"] == text, "the chart renders it"
    given = tmp_path / "central.yaml"
    assert _readers_refusal(given) is not None, "a service's reader refuses it"
    code, out = _check_central(given, capsys)
    failed = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert code == 1 and any(line.startswith(f"FAIL  {section}: ") for line in failed), out
    assert all(f"{section}." in line for line in failed), out
