"""The detector's HTTP ingestion endpoint for model CI (``services/detector/ingest_server.py``), parsed once with the
process's settings: ``MODELGUARD_INGEST_PORT`` turns it on (off when unset or 0), ``MODELGUARD_INGEST_HOST``
(default 0.0.0.0), ``MODELGUARD_REPORTER_KEY_FILE`` (default ``<keys dir>/reporter.key``: the key the reports are
signed with on the CI's behalf), ``MODELGUARD_INGEST_STUCK_AFTER_S`` (default 900, 0 for never).

The bearer token (``MODELGUARD_INGEST_TOKEN``) is a secret and not here: the endpoint reads it from the secrets
mapping its composition root hands it (``services/detector/main.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from libs.settings_error import SettingsError

INGEST_PORT_ENV = "MODELGUARD_INGEST_PORT"
INGEST_STUCK_ENV = "MODELGUARD_INGEST_STUCK_AFTER_S"
DEFAULT_STUCK_AFTER_S = 900.0
REPORTER = "reporter"
"""The CI reporter's producer name (``libs.events.evaluation_report.PRODUCER``), its key file's default stem; not
imported from there, which would load the signing code into every process that reads settings (the runner)."""


@dataclass(frozen=True)
class IngestSettings:
    port: int
    host: str
    reporter_key_file: Path
    stuck_after_s: float | None = DEFAULT_STUCK_AFTER_S
    """How long a run may go without a new event before its verdict says ``stuck``; None: never."""


def _stuck_after_s(environ: Mapping[str, str]) -> float | None:
    raw = environ.get(INGEST_STUCK_ENV, "").strip()
    if not raw:
        return DEFAULT_STUCK_AFTER_S
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise SettingsError(f"{INGEST_STUCK_ENV} must be a number of seconds (0: never), got {raw!r}")
    return seconds or None


def ingest_settings_from(environ: Mapping[str, str], keys_dir: Path) -> IngestSettings | None:
    """The endpoint's settings, None when it is off."""
    raw = environ.get(INGEST_PORT_ENV, "").strip()
    if not raw or raw == "0":
        return None
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise SettingsError(f"{INGEST_PORT_ENV} must be a TCP port number, got {raw!r}")
    key_file = environ.get("MODELGUARD_REPORTER_KEY_FILE", "").strip()
    return IngestSettings(
        port=int(raw),
        host=environ.get("MODELGUARD_INGEST_HOST", "").strip() or "0.0.0.0",
        reporter_key_file=Path(key_file) if key_file else keys_dir / f"{REPORTER}.key",
        stuck_after_s=_stuck_after_s(environ),
    )
