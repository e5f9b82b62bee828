"""A home whose ledger holds the demo's two incidents, made by the real handlers in this process (no broker):
the churn regression through `investigate`, the schema change of act 2 through the context service's own MCL
intake (DataHub's encoding, as `emit-mcl` puts it on the topic) and then the publisher, and a checkpoint sealed
with the ledger's key as the ledger service seals one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from libs.artifacts.store import LocalArtifactStore
from libs.bundle.load import load_bundle
from libs.events.codec import seal
from libs.events.factory import next_event
from libs.ledger import LedgerStore, write_checkpoint
from libs.settings import Settings, load_settings
from libs.signing.keys import KeyRegistry, SigningKey, load_private_key
from modelguard.console.ledger_source import ConsoleLedger
from modelguard.emit_mcl import OFFLINE_SCHEMA_ID, encode_change
from modelguard.investigate import built_services, install_bundle_inputs, investigate, run_in_memory
from modelguard.stack import SCENARIOS
from services.context import bootstrap as context_bootstrap
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
    runtime signs it, then published to the publisher and the ledger over the in-memory transport. The incident
    id."""
    bundle_settings = install_bundle_inputs(settings, load_bundle(CHURN))
    raw, _urn = encode_change(CHANGE, [CHURN / "datahub" / "metadata.json"], OFFLINE_SCHEMA_ID)
    key = load_private_key("context", bundle_settings.keys_dir / "context.key")
    context = context_bootstrap.bootstrap(bundle_settings, key)
    (first,) = context.external[0].handle(raw, None)
    event = next_event(
        first.payload,
        producer=context.name,
        producer_version=context.version,
        occurred_at=context.clock(),
        incident_id=first.incident_id,
        extra_input_digests=[first.input_digest],
    )
    run = run_in_memory(bundle_settings, built_services(bundle_settings, ["publisher", "ledger"]), [seal(event, key)])
    assert not run.dead_letters, run.dead_letters
    return first.incident_id
