"""Write the stored-envelope corpus (tests/fixtures/envelope-corpus/) from the ledger of a real run.

    .venv/bin/python -m modelguard demo --out /tmp/corpus-demo
    .venv/bin/python -m tests.support.envelope_corpus /tmp/corpus-demo/stack tests/fixtures/envelope-corpus

`envelopes.jsonl`: every envelope of that ledger, byte for byte, in ledger order, with its incident. `registry.json`:
the public keys only. `older-minor.jsonl`: each event of a contract past its first minor as its writer at x.0 would
have signed it (without the fields the later minors added, signed with the run's own producer key, which is not
kept). `expected.json`: what replaying the corpus must give: each incident's events and status. The corpus is
written once per contract release and never regenerated for a new one: it is the past a new reader must still read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from contracts.envelope import EVENT_PAYLOAD_TYPE
from libs.canonical_json import canonical_bytes
from libs.events.codec import envelope_bytes, open_envelope
from libs.ledger import LedgerStore
from libs.ledger.projections import project
from libs.signing.dsse import sign_envelope
from libs.signing.keys import KeyRegistry, load_private_key

# What each minor added, by contract version: the fields a writer of the version before did not know.
ADDED_IN = {"1.1": ("model_ownership", "dataset_ownership", "cause_datasets", "owners", "source_urn")}


def without_fields(value: Any, names: tuple[str, ...]) -> Any:
    """``value`` with every mapping's keys in ``names`` dropped, at any depth."""
    if isinstance(value, dict):
        return {k: without_fields(v, names) for k, v in value.items() if k not in names}
    if isinstance(value, list):
        return [without_fields(v, names) for v in value]
    return value


def write_corpus(home: Path, out: Path) -> None:
    registry = KeyRegistry.load(home / "keys" / "registry.json")
    store = LedgerStore(f"sqlite:///{home / 'ledger.sqlite'}")
    rows = store.events_after(0, limit=100_000)
    out.mkdir(parents=True, exist_ok=True)
    with (out / "envelopes.jsonl").open("w") as lines:
        for row in rows:
            lines.write(json.dumps({"incident_id": row.incident_id, "envelope": row.envelope}) + "\n")
    (out / "registry.json").write_text(json.dumps(registry.to_document(), indent=2, sort_keys=True) + "\n")
    opened = [open_envelope(row.envelope_bytes, registry) for row in rows]
    with (out / "older-minor.jsonl").open("w") as lines:
        for signed in opened:
            version = signed.event.meta.event_version
            if version not in ADDED_IN:
                continue
            document = without_fields(signed.event.model_dump(mode="json", exclude_unset=True), ADDED_IN[version])
            document["meta"]["event_version"] = version.split(".")[0] + ".0"
            producer = signed.event.meta.producer
            key = load_private_key(producer, home / "keys" / f"{producer}.key")
            envelope = sign_envelope(canonical_bytes(document), EVENT_PAYLOAD_TYPE, key)
            lines.write(json.dumps({"written_as": version, "envelope": envelope_bytes(envelope).decode()}) + "\n")
    projections = project(s.event for s in opened)
    expected = {
        incident: {
            "events": [s.event.meta.event_type for s in opened if s.event.meta.incident_id == incident],
            "status": projection.status,
        }
        for incident, projection in sorted(projections.items())
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
    store.close()


if __name__ == "__main__":
    write_corpus(Path(sys.argv[1]), Path(sys.argv[2]))
