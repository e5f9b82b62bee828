"""``modelguard policy check-central FILE``: a whole central policy read, before it is deployed, by every reader of
it the services run, each pointed at FILE as ``MODELGUARD_CENTRAL_POLICY`` would point it (through the reader's own
path parameter: the process environment is neither read nor changed).

The services read the central policy section by section, each where it needs it: the delivery section at every
service's start, other sections when a service first needs them (the sandbox, the images and the patch guard's
bounds only when a command runs or a repair is made), the diagnosis thresholds, validation and CI results inside a
model's effective policy. A bad field in a section read late fails only then, in production; the check runs every
reader at once, on the file as given.

The report: one line per reader, ``ok`` with the reader's name or ``FAIL`` with its section and the reader's own
words; a ``note`` for each section the file leaves out or empty that its readers accepted so (the services then use
the code's defaults) and for each section no reader reads (a misspelt name, whose real section takes its defaults);
then one line of verdict. A file that is not a readable YAML mapping raises CentralPolicyError (bad input).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from libs.bundle.load import Bundle, BundleError, load_bundle
from libs.bus.delivery_policy import default_delivery_policy
from libs.datahub.mcl import intake_limits
from libs.datahub.mcl.intake_limits import central_mcl_limits
from libs.patch_guard.policy import load_central_policy
from libs.policy.central import read_central_policy_document
from libs.policy.diagnosis import central_diagnosis_policy
from libs.policy.effective import CENTRAL_SECTIONS, effective_policy_bytes, read_central_policy
from libs.policy.errors import first_problem
from libs.policy.model_policies import onboarding
from libs.policy.model_policies.onboarding import central_onboarding
from libs.policy.model_policy import ModelPolicy, parse_policy
from libs.sandbox.job import image_policy
from libs.sandbox.job.image_policy import default_image_policy
from libs.sandbox.limits import default_sandbox_policy

EXAMPLE_MODEL = Path(__file__).resolve().parents[1] / "fixtures" / "scenarios" / "churn-monthly-spend"
"""The model whose gate and workspace carry the central sections into an effective policy, as ``stack up`` writes
one for each bundled scenario; the model's part does not change what the sections' readers accept."""

SECTION_READERS: tuple[tuple[str, Callable[[Path], object]], ...] = (
    ("delivery", default_delivery_policy),
    ("repair", load_central_policy),
    ("diagnosis", central_diagnosis_policy),
    ("sandbox", default_sandbox_policy),
    (image_policy.SECTION, default_image_policy),
    (onboarding.SECTION, central_onboarding),
    (intake_limits.SECTION, central_mcl_limits),
)
"""Each section's own reader, as the services call it (each with the central policy's path)."""


class CheckUnavailable(RuntimeError):
    """The check itself cannot run (the example model is not installed): nothing is said of the file."""


@dataclass(frozen=True)
class Reader:
    label: str
    """How the report names it: the section it reads, or the sections of a model's effective policy."""
    sections: tuple[str, ...]
    name: str
    read: Callable[[Path], object]


def _named(function: Callable[..., Any]) -> str:
    return f"{function.__module__}.{function.__qualname__}"


def readers(model: Bundle) -> tuple[Reader, ...]:
    """Every reader of the central policy the services run: each section's own, then the parse of a model's
    effective policy (``model``'s gate and workspace inside the central sections), which the detector, the
    diagnoser, the repairer and the validator read the diagnosis, repair, sandbox, validation and ci sections by."""

    def effective(path: Path) -> ModelPolicy:
        return parse_policy(effective_policy_bytes(model, read_central_policy(path)), str(path))

    return (
        *(Reader(section, (section,), _named(read), read) for section, read in SECTION_READERS),
        Reader(
            ", ".join(CENTRAL_SECTIONS),
            CENTRAL_SECTIONS,
            f"{_named(parse_policy)} of a model's effective policy ({model.name})",
            effective,
        ),
    )


@cache
def example_model() -> Bundle:
    try:
        return load_bundle(EXAMPLE_MODEL)
    except BundleError as error:
        raise CheckUnavailable(f"a model's effective policy cannot be built to check: {error}") from None


def refusal(reader: Reader, path: Path) -> str | None:
    """What ``reader`` says of the central policy at ``path`` in one line: None when it reads it."""
    try:
        reader.read(path)
    except ValidationError as error:  # pydantic's own, over several lines, should a reader ever let one out
        return first_problem(error, reader.sections if len(reader.sections) == 1 else ())
    except ValueError as error:  # each reader's error is its own one-line ValueError
        return " ".join(str(error).split())
    return None


def check_central_policy(path: Path) -> tuple[list[str], bool]:
    """The report on the central policy at ``path``, and whether every reader accepts it. CentralPolicyError when
    the file is not a readable YAML mapping."""
    document = read_central_policy_document(path)
    verdicts = [(reader, refusal(reader, path)) for reader in readers(example_model())]
    lines = [
        f"ok    {reader.label}: {reader.name}" if refused is None else f"FAIL  {reader.label}: {refused}"
        for reader, refused in verdicts
    ]
    lines += _notes(document, verdicts)
    refusing = sum(refused is not None for _, refused in verdicts)
    if refusing:
        lines.append(f"{path}: {refusing} of the {len(verdicts)} readers of the central policy refuse it")
    else:
        lines.append(f"{path}: the {len(verdicts)} readers of the central policy accept it")
    return lines, not refusing


def _notes(document: dict[str, Any], verdicts: list[tuple[Reader, str | None]]) -> list[str]:
    """Sections left out or empty whose readers accepted that (so they read the code's defaults), and sections no
    reader reads."""
    accepted: dict[str, bool] = {}
    for reader, refused in verdicts:
        for section in reader.sections:
            accepted[section] = accepted.get(section, True) and refused is None
    notes = []
    for section, read in accepted.items():
        if read and section not in document:
            notes.append(f"note  {section}: not in the file: the services use the code's defaults")
        elif read and not document[section]:
            notes.append(f"note  {section}: empty: the services use the code's defaults")
    notes += [f"note  {key}: no service reads this section" for key in document if key not in accepted]
    return notes
