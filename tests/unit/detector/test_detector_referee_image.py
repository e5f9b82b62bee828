"""A model whose policy names its own image, where that image cannot be had, ends its incident as an outcome
(``environment_failed``, the image named as the declaration), never a dead letter: the referee refuses it before any
Job is made, whether the central policy does not allow the image or no Job backend runs here."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from contracts.events.evaluation import EnvironmentFailed
from services.detector.handler import detect
from tests.support.tiny_bundle import make_tiny_bundle
from tests.unit.detector.test_detector_referee import _reported

IMAGE = "registry.example.com/ml/tiny@sha256:" + "7a" * 32


def _bundle_with_image(tmp_path: Path) -> Path:
    bundle = make_tiny_bundle(tmp_path / "bundle", candidate="candidate", contract="predict")
    document = yaml.safe_load((bundle / "bundle.yaml").read_text())
    document["workspace"]["image"] = IMAGE
    (bundle / "bundle.yaml").write_text(yaml.safe_dump(document))
    return bundle


@pytest.mark.parametrize(
    ("allowed", "why"),
    [([], "workspace_images.allowed is empty"), (["registry.example.com/ml/"], "MODELGUARD_IMAGE_JOBS is off")],
)
def test_an_image_that_cannot_be_had_ends_the_incident_as_environment_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, allowed: list[str], why: str
) -> None:
    central = tmp_path / "central.yaml"
    central.write_text(yaml.safe_dump({"workspace_images": {"allowed": allowed}}))
    monkeypatch.setenv("MODELGUARD_CENTRAL_POLICY", str(central))
    monkeypatch.delenv("MODELGUARD_IMAGE_JOBS", raising=False)
    evaluation, policy, store, referee = _reported(tmp_path, "candidate", bundle=_bundle_with_image(tmp_path))
    assert policy.policy.workspace.image == IMAGE
    event = detect(evaluation, policy, store, referee)
    assert isinstance(event, EnvironmentFailed)
    assert event.declaration == f"image {IMAGE}" and why in event.reason
