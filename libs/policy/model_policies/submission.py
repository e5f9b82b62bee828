"""A model's own policy, sent by its CI: what it may set, and the effective policy the detector makes of it.

A submitted document may set only ``name``, ``gate`` and ``workspace`` (and ``applies_to``, when it names
exactly the model it is sent for). Every other section is taken from the platform's central policy as it is,
so a submission narrows that policy and never widens it: its ``repair_paths`` can only narrow the central
``repair.permitted_paths``, its ``timeout_s`` only lower the sandbox's ``wall_s``, and its gate tolerance is
bounded by ``onboarding.max_tolerance``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from libs.policy.effective import CENTRAL_SECTIONS
from libs.policy.errors import PolicyError
from libs.policy.model_policies.onboarding import OnboardingPolicy
from libs.policy.model_policy import ModelPolicy, parse_policy

MODEL_SECTIONS = ("name", "gate", "workspace")
MAX_DOCUMENT_BYTES = 64 * 1024


class SubmissionRefused(PolicyError):
    """The submitted policy cannot be used; one line saying why."""


class NotPermitted(SubmissionRefused):
    """The central policy lets no submitted policy govern this model."""


@dataclass(frozen=True)
class SubmittedPolicy:
    model_urn: str
    model_part: bytes
    """The model's own part (name, applies_to, gate, workspace) as canonical YAML: what is pinned, by digest."""
    document: bytes
    """The effective policy (the model's part inside the central policy's sections), as incidents record it."""
    policy: ModelPolicy

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.model_part).hexdigest()


def checked_submission(
    raw: bytes, model_urn: str, central: Mapping[str, Any], onboarding: OnboardingPolicy
) -> SubmittedPolicy:
    """``raw`` checked for ``model_urn`` against the central policy; raises SubmissionRefused with the reason.

    The same check runs again on every use of a pinned policy, so a central policy tightened since the pin
    applies to it too."""
    if not onboarding.accepts_submissions_for(model_urn):
        raise NotPermitted(
            f"{model_urn}: the central policy's onboarding.submitted_policies_for does not match this model; "
            "its policy belongs in the platform's policy folder"
        )
    if len(raw) > MAX_DOCUMENT_BYTES:
        raise SubmissionRefused(f"a submitted policy may have at most {MAX_DOCUMENT_BYTES} bytes, got {len(raw)}")
    try:
        if any(isinstance(event, yaml.AliasEvent) for event in yaml.parse(raw, Loader=yaml.SafeLoader)):
            raise SubmissionRefused("submitted policy: YAML aliases are not accepted")
        document = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise SubmissionRefused(f"submitted policy: not YAML: {' '.join(str(exc).split())}") from exc
    except RecursionError:  # PyYAML composes a node per level, recursively
        raise SubmissionRefused(
            "submitted policy: not YAML this reader can take: nested past the parser's limit"
        ) from None
    if not isinstance(document, dict):
        raise SubmissionRefused("submitted policy: a policy is a mapping")
    foreign = sorted(str(key) for key in document if key not in (*MODEL_SECTIONS, "applies_to"))
    if foreign:
        raise SubmissionRefused(
            f"submitted policy: {', '.join(foreign)}: set by the platform's central policy; a model's policy may "
            f"set only {', '.join(MODEL_SECTIONS)}"
        )
    applies_to = document.get("applies_to", [model_urn])
    if applies_to != [model_urn]:
        raise SubmissionRefused(f"submitted policy: applies_to must be absent or exactly [{model_urn}]")
    model_part = {
        "name": document.get("name") or _name_of(model_urn),
        "applies_to": [model_urn],
        "gate": document.get("gate"),
        "workspace": document.get("workspace"),
    }
    effective = model_part | {section: central.get(section) or {} for section in CENTRAL_SECTIONS}
    encoded = yaml.safe_dump(effective, sort_keys=True, allow_unicode=True).encode("utf-8")
    try:
        policy = parse_policy(encoded, "submitted policy")
    except PolicyError as exc:
        raise SubmissionRefused(str(exc)) from exc
    bound = onboarding.max_tolerance
    if bound is not None and policy.gate.tolerance > bound:
        raise SubmissionRefused(
            f"submitted policy: gate.tolerance {policy.gate.tolerance} is wider than the central policy's "
            f"onboarding.max_tolerance {bound}"
        )
    canonical = yaml.safe_dump(model_part, sort_keys=True, allow_unicode=True).encode("utf-8")
    return SubmittedPolicy(model_urn, canonical, encoded, policy)


def _name_of(model_urn: str) -> str:
    """A readable default name: the model's name inside its URN (``urn:li:mlModel:(platform,name,env)``)."""
    inner = model_urn.rpartition(":(")[2].rstrip(")").split(",")
    return inner[1] if len(inner) == 3 and inner[1] else "submitted"
