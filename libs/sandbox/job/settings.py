"""Where the commands of a model that names its own image run (docs/deploy.md, "Workspace commands in the model's
image"): ``MODELGUARD_IMAGE_JOBS`` unset or ``off`` runs none (such a model ends ``environment_failed``);
``kubernetes`` runs each as a Job through the Kubernetes API the pod's service account reaches.

The caller's side only: the two ModelGuard roles in the Job's pod read their own few variables (``pod.py``)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from libs.sandbox.job.pod import DEFAULT_PORT
from libs.settings import SettingsError

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
BACKENDS = ("off", "kubernetes")
NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
CPU = re.compile(r"^(?:[0-9]+m|[0-9]+(?:\.[0-9]{1,3})?)$")


@dataclass(frozen=True)
class ImageJobSettings:
    enabled: bool = False
    namespace: str = "modelguard-jobs"
    helper_image: str = ""
    """ModelGuard's own image (the receive and collect roles), by digest in production."""
    api_url: str = ""
    token_file: Path = SERVICE_ACCOUNT_DIR / "token"
    ca_file: Path | None = SERVICE_ACCOUNT_DIR / "ca.crt"
    service_account: str = "modelguard-workspace"
    """The Job pods' service account: no role bound to it, and its token is never mounted."""
    port: int = DEFAULT_PORT
    cpu: str = "1"
    start_timeout_s: float = 300.0
    answer_margin_s: float = 60.0
    poll_s: float = 1.0


def _float(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        raise SettingsError(f"{name} must be a number, got {raw!r}") from None
    if not value > 0:
        raise SettingsError(f"{name} must be positive, got {raw!r}")
    return value


def _api_url() -> str:
    configured = os.environ.get("MODELGUARD_JOB_API_URL", "").strip()
    if configured:
        if not configured.startswith(("https://", "http://")):
            raise SettingsError(f"MODELGUARD_JOB_API_URL must be an http(s) URL, got {configured[:100]!r}")
        return configured.rstrip("/")
    host = os.environ.get("KUBERNETES_SERVICE_HOST", "").strip()
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443").strip()
    if not host:
        raise SettingsError(
            "MODELGUARD_IMAGE_JOBS=kubernetes needs the Kubernetes API: run in a pod (KUBERNETES_SERVICE_HOST) "
            "or set MODELGUARD_JOB_API_URL"
        )
    return f"https://[{host}]:{port}" if ":" in host else f"https://{host}:{port}"


def load_image_job_settings() -> ImageJobSettings:
    backend = os.environ.get("MODELGUARD_IMAGE_JOBS", "").strip() or "off"
    if backend not in BACKENDS:
        raise SettingsError(f"MODELGUARD_IMAGE_JOBS must be one of {', '.join(BACKENDS)}, got {backend[:100]!r}")
    if backend == "off":
        return ImageJobSettings()
    helper = os.environ.get("MODELGUARD_JOB_HELPER_IMAGE", "").strip()
    if not helper:
        raise SettingsError("MODELGUARD_IMAGE_JOBS=kubernetes needs MODELGUARD_JOB_HELPER_IMAGE (ModelGuard's image)")
    namespace = os.environ.get("MODELGUARD_JOB_NAMESPACE", "").strip() or "modelguard-jobs"
    account = os.environ.get("MODELGUARD_JOB_SERVICE_ACCOUNT", "").strip() or "modelguard-workspace"
    for variable, value in (("MODELGUARD_JOB_NAMESPACE", namespace), ("MODELGUARD_JOB_SERVICE_ACCOUNT", account)):
        if not NAME.match(value):
            raise SettingsError(f"{variable} must be a Kubernetes name, got {value[:100]!r}")
    cpu = os.environ.get("MODELGUARD_JOB_CPU", "").strip() or "1"
    if not CPU.match(cpu):
        raise SettingsError(f"MODELGUARD_JOB_CPU must be cores as a Kubernetes quantity (1, 0.5, 500m), got {cpu!r}")
    raw_port = os.environ.get("MODELGUARD_JOB_PORT", "").strip() or str(DEFAULT_PORT)
    if not raw_port.isdigit() or not 0 < int(raw_port) < 65536:
        raise SettingsError(f"MODELGUARD_JOB_PORT must be a TCP port, got {raw_port[:20]!r}")
    token = Path(os.environ.get("MODELGUARD_JOB_TOKEN_FILE", "").strip() or SERVICE_ACCOUNT_DIR / "token")
    ca_raw = os.environ.get("MODELGUARD_JOB_CA_FILE", "").strip()
    ca_file: Path | None = Path(ca_raw) if ca_raw else SERVICE_ACCOUNT_DIR / "ca.crt"
    if ca_raw == "system":
        ca_file = None  # the system's trust store
    return ImageJobSettings(
        enabled=True,
        namespace=namespace,
        helper_image=helper,
        api_url=_api_url(),
        token_file=token,
        ca_file=ca_file,
        service_account=account,
        port=int(raw_port),
        cpu=cpu,
        start_timeout_s=_float("MODELGUARD_JOB_START_TIMEOUT_S", 300.0),
        answer_margin_s=_float("MODELGUARD_JOB_ANSWER_MARGIN_S", 60.0),
        poll_s=_float("MODELGUARD_JOB_POLL_S", 1.0),
    )
