"""How often a service retries an input that failed for a reason outside it (``TransientFailure``): the
central policy's ``delivery`` section. Each failed attempt waits longer (``backoff_base_s`` doubling up to
``backoff_cap_s``, or what the failure asks for when that is longer: a rate limit's reset); after
``max_attempts`` the input is dead-lettered with ``retries-exhausted`` and the partition moves on, so one input
that always fails cannot block the others."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from libs.backoff import Backoff
from libs.policy.central import CentralPolicyError, installed_central_policy, read_central_policy_document


class DeliveryPolicyError(ValueError):
    pass


class DeliveryPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    max_attempts: int = Field(default=10, ge=1)
    backoff_base_s: float = Field(default=1.0, gt=0)
    backoff_cap_s: float = Field(default=60.0, gt=0)

    def delay(self, failed: int, asked_s: float) -> float:
        """The wait after failed attempt number ``failed`` (1 for the first)."""
        return max(asked_s, Backoff(self.backoff_base_s, self.backoff_cap_s, jitter=0.0).delay(failed))

    def exhausted(self, failed: int) -> bool:
        return failed >= self.max_attempts


def delivery_policy_from(section: object, origin: str) -> DeliveryPolicy:
    if section is None:
        return DeliveryPolicy()
    if not isinstance(section, dict):
        raise DeliveryPolicyError(f"{origin}: the delivery section is a mapping")
    try:
        return DeliveryPolicy.model_validate(section)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise DeliveryPolicyError(f"{origin}: delivery.{where}: {first['msg']}") from exc


@cache
def _read(path: Path, mtime_ns: int) -> DeliveryPolicy:
    try:
        document = read_central_policy_document(path)
    except CentralPolicyError as exc:
        raise DeliveryPolicyError(str(exc)) from exc
    return delivery_policy_from(document.get("delivery"), str(path))


def default_delivery_policy(path: Path | None = None) -> DeliveryPolicy:
    """The central policy's delivery section (``path``, else ``$MODELGUARD_CENTRAL_POLICY`` or ``policy/central.yaml``);
    the defaults when none was named and none is installed, a CentralPolicyError when the one named is not there."""
    installed = installed_central_policy(path)
    if installed is None:
        return DeliveryPolicy()
    return _read(*installed)
