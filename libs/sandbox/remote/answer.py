"""The caller's check of the workspace runner's answer, before anything of it is used: a parcel of the expected
shape, a manifest that validates, members that match its digests, a report that ran under the limits the caller
asked for (and in a sandbox, unless the policy allows none), and output files that land inside the command's
output folders. Any of that wrong discards the whole answer (``RunnerAnswerRejected``); nothing is written.

Then the output files are placed as the local sandbox places them (``libs/sandbox/staging.py``): only regular
files, never through a link, a file already there replaced only when the command line named it as an output;
a file that cannot be placed is reported in ``outputs_not_copied`` (which fails the run)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.protected_paths import inside
from libs.sandbox.remote.parcel import Parcel, ParcelError, check_complete, check_member, read_parcel
from libs.sandbox.remote.protocol import (
    ANSWER_MANIFEST,
    MAX_MANIFEST_BYTES,
    MAX_OUTPUT_FILES,
    MAX_OUTPUTS_BYTES,
    STDERR_MEMBER,
    STDOUT_MEMBER,
    UTF8_EXPANSION,
    AnswerManifest,
    AnswerOutput,
    RunnerAnswerRejected,
    first_error,
    output_member,
)
from libs.sandbox.remote.shipment import Shipment
from libs.sandbox.report import SandboxReport

RUNNER_MECHANISMS = ("bwrap", "none")
"""What the workspace runner may answer ran the command (``none`` only where the policy allows it)."""
OUTPUT_MEMBER = re.compile(r"^outputs/(0|[1-9][0-9]{0,3})$")


@dataclass(frozen=True)
class Accepted:
    returncode: int
    duration_s: float
    report: SandboxReport
    """As the runner sent it (its ``outputs_written`` replaced by what the caller placed)."""
    stdout: str
    stderr: str
    written: tuple[str, ...]
    not_copied: tuple[str, ...]


def _limit_of(policy: SandboxPolicy) -> Callable[[str], int | None]:
    text = UTF8_EXPANSION * policy.limits.output_bytes + 4096
    per_file = min(policy.limits.file_size_bytes, MAX_OUTPUTS_BYTES)

    def limit_of(name: str) -> int | None:
        if name in (STDOUT_MEMBER, STDERR_MEMBER):
            return text
        match = OUTPUT_MEMBER.match(name)
        return per_file if match and int(match.group(1)) < MAX_OUTPUT_FILES else None

    return limit_of


def _folder_of(output: AnswerOutput, shipment: Shipment) -> Path:
    target = Path(output.path)
    holding = [folder for folder in shipment.output_folders if inside(target, folder) and target != folder]
    if not holding:
        raise RunnerAnswerRejected(
            f"the workspace runner's answer puts a file outside the command's output folders: {output.path[:300]}"
        )
    return max(holding, key=lambda folder: len(folder.parts))


def _checked(
    parcel: Parcel, shipment: Shipment, policy: SandboxPolicy, mechanisms: tuple[str, ...]
) -> tuple[AnswerManifest, list[Path]]:
    try:
        manifest = AnswerManifest.model_validate_json(parcel.manifest)
    except ValidationError as error:
        why = first_error(error)
        raise RunnerAnswerRejected(f"the workspace runner's {ANSWER_MANIFEST} is invalid: {why}") from None
    if manifest.report.limits != policy.limits:
        raise RunnerAnswerRejected("the workspace runner's report names other limits than the ones the caller sent")
    if manifest.report.mechanism not in mechanisms:
        raise RunnerAnswerRejected(
            f"the workspace runner's report names the mechanism {manifest.report.mechanism}, not "
            f"{' or '.join(mechanisms)}"
        )
    if manifest.report.mechanism == "none" and not policy.allow_unconfined:
        raise RunnerAnswerRejected(
            "the workspace runner ran the command without a sandbox, which the sandbox policy does not allow"
        )
    if sum(output.size for output in manifest.outputs) > MAX_OUTPUTS_BYTES:
        raise RunnerAnswerRejected(f"the workspace runner's output files exceed {MAX_OUTPUTS_BYTES} bytes together")
    for output in manifest.outputs:
        _folder_of(output, shipment)
        if output.size > policy.limits.file_size_bytes:
            raise RunnerAnswerRejected(f"an output file exceeds the file-size limit: {output.path[:300]}")
    named = [STDOUT_MEMBER, STDERR_MEMBER, *(output_member(i) for i in range(len(manifest.outputs)))]
    check_complete(parcel, named)
    check_member(parcel, STDOUT_MEMBER, manifest.stdout.sha256, manifest.stdout.size)
    check_member(parcel, STDERR_MEMBER, manifest.stderr.sha256, manifest.stderr.size)
    files = [
        check_member(parcel, output_member(index), output.sha256, output.size)
        for index, output in enumerate(manifest.outputs)
    ]
    return manifest, files


def _refusal(target: Path, folder: Path, named: set[Path]) -> str | None:
    """Why ``target`` cannot be written (its missing parent folders inside ``folder`` are created)."""
    current = folder
    for part in target.relative_to(folder).parts[:-1]:
        current = current / part
        if current.is_symlink():
            return "outside the output folder"
        if not os.path.lexists(current):
            current.mkdir()
        elif not current.is_dir():
            return "a file is there"
    if not Path(os.path.realpath(target.parent)).is_relative_to(os.path.realpath(folder)):
        return "outside the output folder"
    if os.path.islink(target):
        return "a link is there"
    if target.is_dir():
        return "a folder is there"
    if os.path.lexists(target) and target not in named:
        return "a file is already there and the command line did not name it as an output"
    return None


def _write(source: Path, target: Path) -> None:
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(descriptor, "wb") as out, source.open("rb") as handle:
        shutil.copyfileobj(handle, out)


def accept_answer(
    answer: Path,
    shipment: Shipment,
    policy: SandboxPolicy,
    scratch: Path,
    mechanisms: tuple[str, ...] = RUNNER_MECHANISMS,
) -> Accepted:
    """Check the answer parcel ``answer`` (``scratch``: an empty folder of the caller's own) and place its output
    files. ``mechanisms``: what the backend asked may have run the command. Raises RunnerAnswerRejected with the
    reason."""
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        parcel = read_parcel(
            answer,
            manifest=ANSWER_MANIFEST,
            manifest_limit=MAX_MANIFEST_BYTES,
            limit_of=_limit_of(policy),
            max_members=3 + MAX_OUTPUT_FILES,
            into=scratch,
        )
        manifest, files = _checked(parcel, shipment, policy, mechanisms)
    except ParcelError as error:
        raise RunnerAnswerRejected(f"the workspace runner's answer is malformed: {error}") from None
    named = set(shipment.output_files)
    written: list[str] = []
    refused: list[str] = []
    for output, source in zip(manifest.outputs, files, strict=True):
        target = Path(output.path)
        why = _refusal(target, _folder_of(output, shipment), named)
        if why is not None:
            refused.append(f"{target}: {why}")
            continue
        _write(source, target)
        written.append(str(target))
    stdout = parcel.members[STDOUT_MEMBER].path.read_bytes().decode("utf-8", "replace")
    stderr = parcel.members[STDERR_MEMBER].path.read_bytes().decode("utf-8", "replace")
    return Accepted(
        returncode=manifest.returncode,
        duration_s=manifest.duration_s,
        report=manifest.report.report(),
        stdout=stdout,
        stderr=stderr,
        written=tuple(written),
        not_copied=tuple(refused),
    )
