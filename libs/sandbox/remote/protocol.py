"""The workspace runner's wire format, shared by the caller's adapter and the runner service.

One HTTP exchange per command: ``POST /v1/commands`` with a **request parcel** (a tar: ``request.json``, then
``revision.tar``, the working directory as a tar, then ``inputs/<i>``, one member per declared input: the file's
bytes, or a tar of the folder), answered by an **answer parcel** (``answer.json``, ``stdout``, ``stderr``, then
``outputs/<i>``, one member per output file). Each manifest names every other member with its size and sha256.
A refusal is a JSON body ``{"refused": kind, "reason": one line}`` with a 4xx/5xx status.

Both sides treat what they receive as untrusted: sizes are bounded before anything is read (the limits here),
names and paths are checked (absolute, normalised, no ``..``), digests are compared, and only regular files,
folders and links that stay inside their tree are accepted (``parcel.py``, ``trees.py``). Paths are the
caller's: the runner lays everything out under a folder of its own at the same relative places and answers in
the caller's terms.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from libs.policy.sandbox import MIB, SandboxLimits, SandboxPolicy
from libs.sandbox.integrity import TreeChanges
from libs.sandbox.process import CommandNotAllowed, LimitName
from libs.sandbox.protected_paths import inside
from libs.sandbox.report import SandboxReport

PROTOCOL = 1
COMMANDS_PATH = "/v1/commands"
READY_PATH = "/readyz"
ALIVE_PATH = "/healthz"
PARCEL_TYPE = "application/x-tar"
REFUSAL_TYPE = "application/json"

REQUEST_MANIFEST = "request.json"
ANSWER_MANIFEST = "answer.json"
REVISION_MEMBER = "revision.tar"
STDOUT_MEMBER = "stdout"
STDERR_MEMBER = "stderr"

MAX_MANIFEST_BYTES = 4 * MIB
MAX_REQUEST_BYTES = 1024 * MIB
"""The whole request parcel: the revision, the inputs and the manifest."""
MAX_TREE_BYTES = 1024 * MIB
MAX_TREE_ENTRIES = 100_000
MAX_INPUTS = 64
MAX_OUTPUT_FOLDERS = 64
MAX_OUTPUT_FILES = 256
MAX_OUTPUTS_BYTES = 256 * MIB
"""All output files of one command together."""
MAX_ARGUMENTS = 4096
MAX_ARGV_BYTES = 1 * MIB
MAX_LISTED = 2000
"""Entries of one list of the report (the runner says how many more there were)."""
MAX_TEXT = 16 * 1024
MAX_REFUSAL_BYTES = 64 * 1024
TAR_OVERHEAD = 64 * 1024 + 2048 * (3 + MAX_OUTPUT_FILES)
"""Headers and padding of an answer parcel, generously."""
UTF8_EXPANSION = 3
"""A byte the command wrote that is not UTF-8 becomes U+FFFD, three bytes, in the runner's text."""

RefusalKind = Literal[
    "bad_request", "too_large", "not_allowed", "sandbox_unavailable", "busy", "start_failed", "internal"
]


class RunnerUnavailable(CommandNotAllowed):
    """The workspace runner cannot be reached, is not ready, is busy, or refused the request: the command did not
    run (callers that handle a refused command handle this one)."""


class RunnerAnswerRejected(CommandNotAllowed):
    """The workspace runner's answer is malformed, too large or unsafe (a path outside the declared outputs, a
    link, a digest that does not match): it is discarded whole, nothing of it is used."""


class RunnerTimedOut(TimeoutError):
    """The workspace runner did not answer within the command's wall time and the answer margin."""


def answer_limit(limits: SandboxLimits) -> int:
    """The most bytes an answer to a command under ``limits`` can take."""
    outputs = min(MAX_OUTPUTS_BYTES, MAX_OUTPUT_FILES * limits.file_size_bytes)
    return MAX_MANIFEST_BYTES + UTF8_EXPANSION * limits.output_bytes + outputs + TAR_OVERHEAD


def _absolute_path(value: str) -> str:
    if not value.startswith("/") or value == "/" or "\x00" in value or len(value) > 4096:
        raise ValueError("must be an absolute path other than /, without NUL, at most 4096 characters")
    if os.path.normpath(value) != value:
        raise ValueError("must be normalised (no '..', '.', '//' or trailing '/')")
    return value


def _finite(value: float | None) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError("must be finite")
    return value


AbsolutePath = Annotated[str, AfterValidator(_absolute_path)]
Digest = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Text = Annotated[str, StringConstraints(max_length=MAX_TEXT)]
Listed = Annotated[tuple[Text, ...], Field(max_length=MAX_LISTED)]
Seconds = Annotated[float, Field(ge=0, le=10**7), AfterValidator(_finite)]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Blob(_Strict):
    sha256: Digest
    size: int = Field(ge=0, le=MAX_REQUEST_BYTES)


class RequestInput(Blob):
    path: AbsolutePath
    """The input as the caller's command line names it (its real path)."""
    kind: Literal["file", "folder"]
    """A file's bytes, or a folder as a tar."""


def _argv(argv: list[str]) -> list[str]:
    if not argv or len(argv) > MAX_ARGUMENTS:
        raise ValueError(f"must hold 1 to {MAX_ARGUMENTS} arguments")
    if sum(len(argument.encode("utf-8", "surrogatepass")) + 1 for argument in argv) > MAX_ARGV_BYTES:
        raise ValueError(f"holds more than {MAX_ARGV_BYTES} bytes")
    if any("\x00" in argument for argument in argv):
        raise ValueError("an argument holds NUL")
    return argv


def _nested(a: str, b: str) -> bool:
    return inside(Path(a), Path(b)) or inside(Path(b), Path(a))


class RequestManifest(_Strict):
    protocol: Literal[1]
    argv: Annotated[list[str], AfterValidator(_argv)]
    """The command, every path argument the caller's real path (the runner places them under its own folder)."""
    cwd: AbsolutePath
    policy: SandboxPolicy
    revision: Blob
    """``revision.tar``: the working directory."""
    inputs: Annotated[list[RequestInput], Field(max_length=MAX_INPUTS)] = []
    output_folders: Annotated[list[AbsolutePath], Field(max_length=MAX_OUTPUT_FOLDERS)] = []
    queue_s: Seconds = 0.0
    """How long the request may wait for a free slot on the runner before it is refused as busy (the caller waits
    that long, the command's wall time and its margin for the answer)."""

    @model_validator(mode="after")
    def _layout(self) -> RequestManifest:
        paths = [given.path for given in self.inputs]
        for index, path in enumerate(paths):
            if _nested(path, self.cwd):
                raise ValueError(f"input {path} overlaps the working directory")
            if any(_nested(path, other) for other in paths[index + 1 :]):
                raise ValueError(f"input {path} overlaps another input")
        for folder in self.output_folders:
            if _nested(folder, self.cwd):
                raise ValueError(f"output folder {folder} overlaps the working directory")
        if len(set(self.output_folders)) != len(self.output_folders):
            raise ValueError("an output folder is named twice")
        return self


class AnswerOutput(Blob):
    path: AbsolutePath
    """Where the caller puts the file: inside one of the request's output folders."""


class WireChanges(_Strict):
    created: Listed = ()
    modified: Listed = ()
    deleted: Listed = ()


class WireReport(_Strict):
    """A ``SandboxReport`` as JSON (``SandboxReport.as_dict``), every field bounded."""

    mechanism: Literal["bwrap", "none", "kubernetes-job"]
    """``kubernetes-job`` only from a workspace Job's pod (``libs/sandbox/job``); the caller accepts only the
    mechanisms of the backend it asked (``answer.accept_answer``)."""
    network_isolation: Text
    filesystem_isolation: Text
    process_limit: Text
    limits: SandboxLimits
    limit_exceeded: LimitName | None
    ending: Text
    cpu_s: Annotated[float | None, Field(ge=0), AfterValidator(_finite)]
    max_rss_bytes: int | None = Field(ge=0)
    workspace_changes: WireChanges = WireChanges()
    scratch_writes: Listed = ()
    refused_outputs: Listed = ()
    identity: Text = ""
    memory_limit: Text = ""
    cpu_limit: Text = ""
    processes_peak: int | None = Field(default=None, ge=0)
    hidden: Listed = ()
    inputs: Listed = ()
    refused_inputs: Listed = ()
    outputs_written: Listed = ()
    outputs_not_copied: Listed = ()
    runner: Text = ""

    def report(self) -> SandboxReport:
        values: dict[str, Any] = dict(self)
        values["workspace_changes"] = TreeChanges(**dict(self.workspace_changes))
        return SandboxReport(**values)


class AnswerManifest(_Strict):
    protocol: Literal[1]
    returncode: int = Field(ge=-128, le=255)
    duration_s: Seconds
    report: WireReport
    stdout: Blob
    stderr: Blob
    outputs: Annotated[list[AnswerOutput], Field(max_length=MAX_OUTPUT_FILES)] = []

    @model_validator(mode="after")
    def _distinct(self) -> AnswerManifest:
        if len({output.path for output in self.outputs}) != len(self.outputs):
            raise ValueError("an output file is named twice")
        return self


class Refusal(_Strict):
    refused: RefusalKind
    reason: Text


def input_member(index: int) -> str:
    return f"inputs/{index}"


def output_member(index: int) -> str:
    return f"outputs/{index}"


def wire_report(report: SandboxReport) -> dict[str, Any]:
    """``report`` as JSON, each list cut at MAX_LISTED entries (the last one says how many more)."""
    values = report.as_dict()

    def cut(items: list[str]) -> list[str]:
        if len(items) <= MAX_LISTED:
            return [item[:MAX_TEXT] for item in items]
        return [*(item[:MAX_TEXT] for item in items[: MAX_LISTED - 1]), f"… and {len(items) - MAX_LISTED + 1} more"]

    for name, value in values.items():
        if isinstance(value, list):
            values[name] = cut(value)
        elif isinstance(value, str):
            values[name] = value[:MAX_TEXT]
    values["workspace_changes"] = {name: cut(paths) for name, paths in values["workspace_changes"].items()}
    return values


def first_error(error: ValidationError) -> str:
    """One line: where and what, for a manifest that does not validate."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "the document"
    return f"{where}: {first['msg']}"
