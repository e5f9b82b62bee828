"""Write the self-reported evaluation corpus (tests/fixtures/envelope-corpus/self-reported/): EvaluationReported
envelopes as ``modelguard submit`` signs them for a workspace that reports its own figures, and for one that claims
none (the referee computes both), so a reader of a later major must still read both shapes.

    .venv/bin/python -m tests.support.reported_corpus tests/fixtures/envelope-corpus/self-reported

Written once, at EvaluationReported 1.0 (by the code of the commit that added it; today's code would write 2.0),
by the real path: the tiny bundle's
repository is built, its ``evaluate`` command runs in the sandbox for the self-reported run, and the reporter signs.
`envelopes.jsonl`: one line per envelope with what it claims; `registry.json`: the reporter's public key only.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.events.evaluation_report import PRODUCER, sign_report
from libs.signing.keys import load_private_key, provision_keys
from modelguard.reporter import evaluate_bundle
from tests.support.tiny_bundle import make_tiny_bundle


def write_reported_corpus(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        registry = provision_keys([PRODUCER], root / "keys")
        key = load_private_key(PRODUCER, root / "keys" / f"{PRODUCER}.key")
        artifacts = LocalArtifactStore(root / "artifacts")
        lines = []
        for contract, run_id in (("evaluate", "corpus-self-reported-1"), ("predict", "corpus-referee-1")):
            bundle_dir = make_tiny_bundle(root / contract, contract=contract, name=f"tiny-{contract}")
            evaluation = evaluate_bundle(bundle_dir, root / "work", artifacts, run_id, None)
            signed = sign_report(evaluation, load_bundle(bundle_dir).spec.gate.metric, key)
            claims = "figures" if evaluation.claimed is not None else "nothing"
            lines.append(json.dumps({"claims": claims, "envelope": signed.envelope_bytes.decode()}))
        (out / "envelopes.jsonl").write_text("".join(line + "\n" for line in lines))
        (out / "registry.json").write_text(json.dumps(registry.to_document(), indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    write_reported_corpus(Path(sys.argv[1]))
