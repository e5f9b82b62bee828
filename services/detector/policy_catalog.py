"""The detector's policies: the platform's folder of YAML files, re-read when it changes, then the models'
pinned submissions; chosen by the model they apply to.

The folder is read whole at start (a file that cannot be read stops the service). Afterwards every lookup looks
at the files' metadata (a stat per file: lookups come one per evaluation); when a file was added, changed or
removed (a ConfigMap update swaps the files behind their links) the folder is read again. If the new contents
cannot be read, the policies read before stay in force and the reason is logged once: a broken edit never leaves
models without a policy.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Literal

from libs.policy.effective import read_central_policy
from libs.policy.errors import PolicyError
from libs.policy.model_policies.onboarding import OnboardingPolicy, central_onboarding
from libs.policy.model_policies.pins import PolicyPins
from libs.policy.model_policies.submission import NotPermitted, SubmissionRefused, checked_submission
from libs.policy.model_policy import ModelPolicy, parse_policy
from libs.state.port import StateDatabase

log = logging.getLogger("modelguard.detector.policies")
Fingerprint = tuple[tuple[str, int, int, int], ...]


@dataclass(frozen=True)
class LoadedPolicy:
    policy: ModelPolicy
    raw: bytes
    origin: str


@dataclass(frozen=True)
class SubmissionAnswer:
    """What became of a submitted policy: pinned now, pinned before (the same bytes), or not used because a
    policy of the platform's folder governs the model."""

    status: Literal["pinned", "already_pinned", "platform"]
    policy: str
    digest: str | None = None


def load_policies(folder: Path) -> list[LoadedPolicy]:
    if not folder.is_dir():
        raise PolicyError(f"policy folder {folder} does not exist")
    loaded = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise PolicyError(f"{path}: cannot read it: {exc.strerror or exc}") from exc
        loaded.append(LoadedPolicy(parse_policy(raw, str(path)), raw, path.name))
    return loaded


def policy_for(policies: list[LoadedPolicy], model_urn: str) -> LoadedPolicy | None:
    """The first policy (by file name) whose `applies_to` matches the model."""
    for loaded in policies:
        if loaded.policy.applies(model_urn):
            return loaded
    return None


def _fingerprint(folder: Path) -> Fingerprint:
    """What changes when a policy file is added, removed or rewritten (links followed, as a ConfigMap's are)."""
    entries = []
    for path in sorted(folder.glob("*.yaml")):
        try:
            stat = path.stat()
        except OSError:
            continue
        entries.append((path.name, stat.st_ino, stat.st_mtime_ns, stat.st_size))
    return tuple(entries)


class PolicyFolder:
    """The platform's policy folder, as last read successfully."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._lock = threading.Lock()
        self._fingerprint = _fingerprint(folder)
        self._policies = load_policies(folder)

    def current(self) -> list[LoadedPolicy]:
        with self._lock:
            self._reread_if_changed()
            return self._policies

    def _reread_if_changed(self) -> None:
        fingerprint = _fingerprint(self._folder)
        if fingerprint == self._fingerprint:
            return
        self._fingerprint = fingerprint  # a broken edit is reported once, not on every lookup
        try:
            policies = load_policies(self._folder)
        except PolicyError as exc:
            log.warning(
                "policy folder %s changed but cannot be read (%s): the %d policies read before stay in force",
                self._folder,
                exc,
                len(self._policies),
            )
            return
        before = {p.origin for p in self._policies}
        after = {p.origin for p in policies}
        self._policies = policies
        log.info(
            "policy folder %s read again: %d policies (added: %s; removed: %s)",
            self._folder,
            len(policies),
            ", ".join(sorted(after - before)) or "none",
            ", ".join(sorted(before - after)) or "none",
        )


class PolicyCatalog:
    """The policy of a model: the platform's folder first, then the model's pinned submission, if any."""

    def __init__(
        self,
        folder: PolicyFolder,
        pins: PolicyPins | None = None,
        central: Mapping[str, Any] | None = None,
        onboarding: OnboardingPolicy | None = None,
    ) -> None:
        self.folder, self.pins = folder, pins
        self._central = dict(central or {})
        self.onboarding = onboarding or OnboardingPolicy()
        self._checked = lru_cache(maxsize=256)(
            partial(checked_submission, central=self._central, onboarding=self.onboarding)
        )

    def policy_for(self, model_urn: str) -> LoadedPolicy | None:
        loaded = policy_for(self.folder.current(), model_urn)
        if loaded is not None or self.pins is None:
            return loaded
        pin = self.pins.pinned(model_urn)
        if pin is None:
            return None
        try:
            submitted = self._checked(pin.document, model_urn)
        except SubmissionRefused as exc:
            log.warning("the pinned policy of %s no longer fits the central policy: %s", model_urn, exc)
            return None
        return LoadedPolicy(submitted.policy, submitted.document, f"submitted sha256:{pin.digest[:12]}")

    def submit(self, model_urn: str, raw: bytes) -> SubmissionAnswer:
        """Check ``raw`` for ``model_urn`` and pin it; raises SubmissionRefused (NotPermitted, PinConflict)."""
        platform = policy_for(self.folder.current(), model_urn)
        if platform is not None:
            return SubmissionAnswer("platform", platform.origin)
        if self.pins is None:
            raise NotPermitted(
                f"{model_urn}: the central policy accepts no submitted policies (onboarding.submitted_policies_for "
                "is empty); the model's policy belongs in the platform's policy folder"
            )
        submitted = checked_submission(raw, model_urn, self._central, self.onboarding)
        pinned_now = self.pins.pin(submitted)
        return SubmissionAnswer("pinned" if pinned_now else "already_pinned", submitted.policy.name, submitted.digest)


def detector_catalog(policy_dir: Path, state: StateDatabase, central_path: Path | None = None) -> PolicyCatalog:
    """The detector's catalog: the folder, and pins (in the detector's state) only when the central policy accepts
    submissions."""
    onboarding = central_onboarding(central_path)
    if not onboarding.submitted_policies_for:
        return PolicyCatalog(PolicyFolder(policy_dir), onboarding=onboarding)
    return PolicyCatalog(PolicyFolder(policy_dir), PolicyPins.of(state), read_central_policy(central_path), onboarding)
