"""Which images a model's commands may run in: only those the central policy's ``workspace_images.allowed`` names
(a repository, a prefix ending in '/', or one image by digest), pinned by digest, with their registry named. An
empty or missing section allows nothing; a refusal is one line; run_command refuses before any Job is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from libs.policy.central import CentralPolicyError
from libs.policy.model_policy import WorkspacePolicy
from libs.sandbox.job.image_policy import (
    ImageRefused,
    WorkspaceImagePolicy,
    check_image,
    default_image_policy,
    image_policy_from,
)
from libs.workspace.runner import EnvironmentUnavailable, run_command

DIGEST = "sha256:" + "0123456789abcdef" * 4
CHURN = f"registry.example.com/ml/churn@{DIGEST}"
POLICY = WorkspaceImagePolicy(allowed=("registry.example.com/ml/churn", "registry.example.com/team-b/"))


@pytest.mark.parametrize(
    "image",
    [CHURN, f"registry.example.com/team-b/fraud/v2@{DIGEST}", f"registry.example.com/team-b/x@{DIGEST}"],
)
def test_an_allowed_image_pinned_by_digest_runs(image: str) -> None:
    assert check_image(image, POLICY) == image


@pytest.mark.parametrize(
    ("image", "why"),
    [
        ("registry.example.com/ml/churn:latest", "not pinned by digest"),
        (f"registry.example.com/ml/churn:v1@{DIGEST}", "names a tag and a digest"),
        (f"ml/churn@{DIGEST}", "does not name its registry"),
        (f"registry.example.com/ml/churn-evil@{DIGEST}", "not allowed"),
        (f"registry.example.com/team-bad/x@{DIGEST}", "not allowed"),
        (f"evil.example.com/registry.example.com/ml/churn@{DIGEST}", "not allowed"),
        ("registry.example.com/ml/churn@sha256:abc", "not pinned by digest"),
        ("", "at most"),
    ],
)
def test_anything_else_is_refused_with_the_reason(image: str, why: str) -> None:
    with pytest.raises(ImageRefused, match=why):
        check_image(image, POLICY)


def test_an_entry_may_pin_one_image() -> None:
    pinned = WorkspaceImagePolicy(allowed=(CHURN,))
    assert check_image(CHURN, pinned) == CHURN
    with pytest.raises(ImageRefused, match="not allowed"):
        check_image(CHURN.replace("0123", "3210"), pinned)


def test_nothing_is_allowed_by_default_and_bad_entries_are_refused() -> None:
    with pytest.raises(ImageRefused, match="allowed is empty"):
        check_image(CHURN, image_policy_from(None))
    with pytest.raises(ImageRefused, match=r"workspace_images\.allowed"):
        image_policy_from({"allowed": ["not a registry"]})
    with pytest.raises(ImageRefused, match="workspace_images"):
        image_policy_from({"allowed": [], "anything": True})


def test_the_shipped_central_policy_allows_no_image() -> None:
    assert default_image_policy().allowed == ()


def test_a_central_policy_file_named_is_read_not_the_environment_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = tmp_path / "named.yaml"
    named.write_text("workspace_images:\n  allowed: [registry.example.com/ml/]\n", encoding="utf-8")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(tmp_path / "absent.yaml"))
    assert default_image_policy(named).allowed == ("registry.example.com/ml/",)
    with pytest.raises(CentralPolicyError, match=r"absent\.yaml"):
        default_image_policy()  # named and not there: refused, not the empty list of the code's defaults


def _spec(**workspace: object) -> dict[str, object]:
    policy = WorkspacePolicy.model_validate({"predict": ["python", "p.py"], "label": "y", "features": ["python"]})
    return policy.model_copy(update=workspace).command_spec()


def test_the_image_travels_from_the_models_policy_to_the_command() -> None:
    assert "image" not in _spec()
    assert _spec(image=CHURN)["image"] == CHURN
    plain = WorkspacePolicy.model_validate({"predict": ["python", "p.py"], "label": "y", "features": ["python"]})
    assert "image" not in plain.model_dump(mode="json"), "policies without an image dump (and digest) as before"


def test_run_command_refuses_a_disallowed_image_before_any_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    central = tmp_path / "central.yaml"
    central.write_text("workspace_images:\n  allowed: [registry.example.com/ml/churn]\n")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(central))
    monkeypatch.setenv("MODELGUARD_IMAGE_JOBS", "kubernetes")
    monkeypatch.setenv("MODELGUARD_JOB_HELPER_IMAGE", "registry.example.com/modelguard@" + DIGEST)
    monkeypatch.setenv("MODELGUARD_JOB_API_URL", "http://127.0.0.1:9")  # nothing listens: never reached
    with pytest.raises(EnvironmentUnavailable, match="not allowed") as refused:
        run_command(["python", "-V"], tmp_path, 10, image=f"registry.example.com/ml/other@{DIGEST}")
    assert refused.value.declaration.startswith("image registry.example.com/ml/other@")


def test_run_command_refuses_an_image_when_no_job_backend_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    central = tmp_path / "central.yaml"
    central.write_text("workspace_images:\n  allowed: [registry.example.com/ml/churn]\n")
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(central))
    monkeypatch.delenv("MODELGUARD_IMAGE_JOBS", raising=False)
    with pytest.raises(EnvironmentUnavailable, match="MODELGUARD_IMAGE_JOBS is off"):
        run_command(["python", "-V"], tmp_path, 10, image=CHURN)
