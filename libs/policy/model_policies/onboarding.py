"""The central policy's ``onboarding`` section: which models' CI may send their own policy, within what bound."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from libs.policy.central import CentralPolicyError, read_central_policy_document
from libs.policy.errors import PolicyError

SECTION = "onboarding"


class OnboardingPolicy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    submitted_policies_for: tuple[str, ...] = ()
    """URN globs of the models whose CI may send their policy with an evaluation; none by default."""
    max_tolerance: float | None = Field(default=None, ge=0)
    """The widest gate tolerance a submitted policy may set; None: no bound."""

    def accepts_submissions_for(self, model_urn: str) -> bool:
        return any(fnmatchcase(model_urn, pattern) for pattern in self.submitted_policies_for)


def central_onboarding(path: Path | None = None) -> OnboardingPolicy:
    """The ``onboarding`` section of ModelGuard's central policy file (absent: no submitted policies)."""
    try:
        section = read_central_policy_document(path).get(SECTION) or {}
    except CentralPolicyError as exc:
        raise PolicyError(str(exc)) from exc
    try:
        return OnboardingPolicy.model_validate(section)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PolicyError(f"central policy: {SECTION}.{where}: {first['msg']}") from exc
