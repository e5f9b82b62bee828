"""Settings from the environment. Secrets are read by the code that needs them, never stored here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


class SettingsError(ValueError):
    pass


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise SettingsError(f"{name} must be an integer, got {raw!r}") from None


def _flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, got {raw!r}")


@dataclass(frozen=True)
class Settings:
    home: Path
    kafka_bootstrap: str
    kafka_idempotence: bool
    kafka_session_timeout_ms: int
    kafka_partitions: int
    ledger_url: str
    artifacts_dir: Path
    keys_dir: Path
    policy_dir: Path
    datahub_files: tuple[Path, ...]
    publish_dir: Path
    trace_file: Path | None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def key_registry_path(self) -> Path:
        return self.keys_dir / "registry.json"

    @property
    def run_dir(self) -> Path:
        return self.home / "run"

    def state_dir(self, service: str) -> Path:
        return self.home / "state" / service


def load_settings() -> Settings:
    home = Path(os.environ.get("MODELGUARD_HOME", ".modelguard")).resolve()
    datahub_files = tuple(
        Path(p) for p in os.environ.get("MODELGUARD_DATAHUB_FILES", "").split(os.pathsep) if p.strip()
    )
    trace = os.environ.get("MODELGUARD_TRACE_FILE")
    return Settings(
        home=home,
        kafka_bootstrap=os.environ.get("MODELGUARD_KAFKA_BOOTSTRAP", "127.0.0.1:9092"),
        kafka_idempotence=_flag("MODELGUARD_KAFKA_IDEMPOTENCE", False),
        kafka_session_timeout_ms=_int("MODELGUARD_KAFKA_SESSION_TIMEOUT_MS", 6000),
        kafka_partitions=_int("MODELGUARD_KAFKA_PARTITIONS", 3),
        ledger_url=os.environ.get("MODELGUARD_LEDGER_URL", f"sqlite:///{home / 'ledger.sqlite'}"),
        artifacts_dir=Path(os.environ.get("MODELGUARD_ARTIFACTS_DIR", str(home / "artifacts"))),
        keys_dir=Path(os.environ.get("MODELGUARD_KEYS_DIR", str(home / "keys"))),
        policy_dir=Path(os.environ.get("MODELGUARD_POLICY_DIR", str(home / "policies"))),
        datahub_files=datahub_files,
        publish_dir=Path(os.environ.get("MODELGUARD_PUBLISH_DIR", str(home / "publications"))),
        trace_file=Path(trace) if trace else None,
    )
