"""A home whose ledger holds the demo's two incidents, made by the real handlers in this process (no broker):
the churn regression through `investigate`, the schema change of act 2 through the context service's own MCL
intake (DataHub's encoding, as `emit-mcl` puts it on the topic) and then the publisher, and a checkpoint sealed
with the ledger's key as the ledger service seals one."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.events.codec import SignedEvent, seal
from libs.events.factory import next_event
from libs.ledger import LedgerStore, write_checkpoint
from libs.settings import Settings, load_settings
from libs.signing.keys import KeyRegistry, SigningKey, load_private_key
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.emit_mcl import OFFLINE_SCHEMA_ID, encode_change
from modelguard.investigate import _definitions, dispatch, install_bundle_inputs, investigate
from modelguard.stack import REPO_ROOT, SCENARIOS
from tests.support.running_stack import environment

CHURN = SCENARIOS / "churn-monthly-spend"
CHANGE = CHURN / "datahub" / "changes" / "rename-account-age.yaml"
DEPLOYMENT = "urn:li:mlModelDeployment:(urn:li:dataPlatform:sagemaker,churn-endpoint,PROD)"
MODEL = "urn:li:mlModel:(urn:li:dataPlatform:mlflow,churn-model-v3,PROD)"


@dataclass(frozen=True)
class ConsoleHome:
    settings: Settings
    regression: str
    risk: str

    @property
    def registry(self) -> KeyRegistry:
        return KeyRegistry.load(self.settings.key_registry_path)

    def key(self, owner: str) -> SigningKey:
        return load_private_key(owner, self.settings.keys_dir / f"{owner}.key")

    def ledger(self, url: str | None = None) -> ConsoleLedger:
        store = LedgerStore(url or self.settings.ledger_url)
        return ConsoleLedger(store, self.registry, LocalArtifactStore(self.settings.artifacts_dir))


def fill_console_home(home: Path) -> ConsoleHome:
    with environment({"MODELGUARD_HOME": str(home)}):
        settings = load_settings()
        events = investigate(settings, CHURN, "console-run-1", 42, lambda _event: None)
        risk = upstream_risk(settings)
        filled = ConsoleHome(settings, events[0].event.meta.incident_id, risk)
        write_checkpoint(LedgerStore(settings.ledger_url), filled.key("ledger"))
    return filled


def upstream_risk(settings: Settings) -> str:
    """Act 2 without a broker: the MCL bytes through the context service's intake, its first event signed as the
    runtime signs it, then dispatched to the publisher; every event appended to the ledger. The incident id."""
    bundle_settings = install_bundle_inputs(settings, load_bundle(CHURN))
    raw, _urn = encode_change(CHANGE, [CHURN / "datahub" / "metadata.json"], OFFLINE_SCHEMA_ID)
    store = LedgerStore(settings.ledger_url)
    with contextlib.chdir(REPO_ROOT):
        services = _definitions(bundle_settings)
        context, key = next((d, k) for d, k in services if d.name == "context")
        (first,) = context.external[0].handle(raw, None)
        event = next_event(
            first.payload,
            producer=context.name,
            producer_version=context.version,
            occurred_at=context.clock(),
            incident_id=first.incident_id,
            extra_input_digests=[first.input_digest],
        )
        others = [(d, k) for d, k in services if d.name != "context"]

        def append(signed: SignedEvent) -> None:
            store.append(signed)

        dispatch(seal(event, key), others, append)
    return first.incident_id
