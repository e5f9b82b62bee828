"""One command for a caller: the request parcel read and checked, laid out under a folder of the runner's own,
run with the existing sandbox (``libs.sandbox.run.run_sandboxed``: bubblewrap, fail closed) under the policy the
caller sent, and answered. Anything the runner will not do is a ``Refused`` with the kind and reason the caller
turns into the same exception it would raise itself."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from libs.sandbox.isolation import SandboxUnavailable
from libs.sandbox.process import CommandNotAllowed
from libs.sandbox.remote.parcel import Parcel, ParcelError, read_parcel
from libs.sandbox.remote.protocol import (
    MAX_INPUTS,
    MAX_MANIFEST_BYTES,
    MAX_REQUEST_BYTES,
    REQUEST_MANIFEST,
    REVISION_MEMBER,
    RefusalKind,
    RequestManifest,
    first_error,
    input_member,
)
from libs.sandbox.remote.trees import TreeRefused
from libs.sandbox.run import SandboxResult, run_sandboxed
from services.runner.answer import write_answer
from services.runner.layout import LayoutRefused, lay_out

STATUS: dict[RefusalKind, int] = {
    "bad_request": 400,
    "too_large": 413,
    "not_allowed": 422,
    "sandbox_unavailable": 503,
    "busy": 503,
    "start_failed": 500,
    "internal": 500,
}
NAMES = frozenset({REVISION_MEMBER, *(input_member(index) for index in range(MAX_INPUTS))})


class Refused(Exception):
    def __init__(self, kind: RefusalKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason

    @property
    def status(self) -> int:
        return STATUS[self.kind]


def _limit_of(name: str) -> int | None:
    return MAX_REQUEST_BYTES if name in NAMES else None


def read_request(request: Path, work: Path) -> tuple[Parcel, RequestManifest]:
    """The request parcel ``request`` read into ``work`` (an empty folder of the runner's) and its manifest checked."""
    into = work / "parcel"
    into.mkdir()
    try:
        parcel = read_parcel(
            request,
            manifest=REQUEST_MANIFEST,
            manifest_limit=MAX_MANIFEST_BYTES,
            limit_of=_limit_of,
            max_members=2 + MAX_INPUTS,
            into=into,
        )
        return parcel, RequestManifest.model_validate_json(parcel.manifest)
    except ValidationError as error:
        raise Refused("bad_request", f"{REQUEST_MANIFEST} is invalid: {first_error(error)}") from None
    except ParcelError as error:
        raise Refused("bad_request", f"the request is malformed: {error}") from None


def run_request(parcel: Parcel, manifest: RequestManifest, work: Path) -> tuple[Path, SandboxResult]:
    """Lay the request out under ``work``, run its command, write the answer parcel there."""
    try:
        job = lay_out(manifest, parcel, work / "root")
    except (ParcelError, TreeRefused, LayoutRefused) as error:
        raise Refused("bad_request", f"the request is malformed: {error}") from None
    try:
        result = run_sandboxed(job.argv, job.cwd, manifest.policy)
    except SandboxUnavailable as error:
        raise Refused("sandbox_unavailable", str(error)) from None
    except CommandNotAllowed as error:
        raise Refused("not_allowed", str(error).replace(str(job.root), "")) from None
    except OSError as error:
        raise Refused("start_failed", f"the command could not start: {error}".replace(str(job.root), "")) from None
    answer = work / "answer.tar"
    write_answer(result, job, answer)
    return answer, result
