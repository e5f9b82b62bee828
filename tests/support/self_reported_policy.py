"""A detector policy that gates on the figures an evaluation reports (a self-reported workspace), for tests that
post hand-made evaluations to a running detector: fake artifacts and the CI's own metrics. The bundled
scenarios declare ``predict``, whose referee needs the real trees and data windows to compute any figure."""

from __future__ import annotations

from pathlib import Path

import yaml

from libs.bundle.load import load_bundle
from libs.policy.effective import effective_policy, read_central_policy
from modelguard.stack import SCENARIOS

CHURN = SCENARIOS / "churn-monthly-spend"
EVALUATE_COMMAND = ["python", "evaluate.py", "--train", "{train}", "--eval", "{eval}"]


def install_self_reported_policy(home: Path, bundle_dir: Path = CHURN) -> Path:
    """Write the bundle's effective policy with ``evaluate`` in place of ``predict`` into the policy folder of
    the stack at ``home``, under a name that sorts before the bundled scenarios' policies, so the detector
    chooses it for the bundle's model. Call it before the stack starts."""
    document = effective_policy(load_bundle(bundle_dir), read_central_policy())
    workspace = {**document["workspace"], "predict": None, "evaluate": EVALUATE_COMMAND}
    document = {**document, "name": f"{document['name']}-self-reported", "workspace": workspace}
    folder = Path(home) / "policies"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"00-{document['name']}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=True), encoding="utf-8")
    return path
