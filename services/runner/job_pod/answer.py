"""The answer parcel of a workspace Job's pod, in the workspace runner's format (``libs/sandbox/remote/protocol.py``),
packed by the ``collect`` role from what the model's container left: the launcher's status, stdout and stderr (the
results volume) and the files in the output folders (the outputs volume), all of it written by the command's uid
and so read as hostile: only regular files, opened without following links, each copied (bounded) before it is
packed; at most MAX_OUTPUT_FILES files and MAX_OUTPUTS_BYTES bytes go back, the rest is listed in
``outputs_not_copied`` (which fails the run). A status that is missing or does not read as the launcher's is
reported as such; the caller takes how the container ended from the kubelet in any case.

The report's isolation fields are left for the caller, which made the Job and knows what enforced what."""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

from libs.canonical_json import strict_loads
from libs.policy.sandbox import SandboxLimits
from libs.sandbox.job import pod
from libs.sandbox.job.report import MECHANISM
from libs.sandbox.process import ProcessOutcome
from libs.sandbox.remote.parcel import write_parcel
from libs.sandbox.remote.protocol import (
    ANSWER_MANIFEST,
    MAX_OUTPUT_FILES,
    MAX_OUTPUTS_BYTES,
    PROTOCOL,
    STDERR_MEMBER,
    STDOUT_MEMBER,
    AnswerManifest,
    output_member,
    wire_report,
)
from libs.sandbox.report import SandboxReport
from libs.sandbox.verdict import ending_text, exceeded_limit

BLOCK = 1 << 16
NO_STATUS = 1
"""The exit status the answer carries when the launcher left no readable status."""
KILLED_FOR = (None, "wall_time", "output")


def _read_capped(path: Path, cap: int) -> bytes:
    """At most ``cap`` bytes of the regular file ``path``, never through a link; empty when there is none."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return b""
    with os.fdopen(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return b""
        return handle.read(cap)


def _number(value: Any, low: float, high: float) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value) if low <= value <= high else None


def read_status(path: Path) -> dict[str, Any] | None:
    """The launcher's status, when it reads as one (the command could have rewritten it: bounds are checked)."""
    try:
        status = strict_loads(_read_capped(path, 64 * 1024) or b"null")
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(status, dict):
        return None
    if isinstance(status.get("refused"), str):
        return {"refused": status["refused"][:2000]}
    returncode = status.get("returncode")
    if isinstance(returncode, bool) or not isinstance(returncode, int) or not -128 <= returncode <= 255:
        return None
    values = {
        "duration_s": _number(status.get("duration_s"), 0, 10**7),
        "cpu_s": _number(status.get("cpu_s"), 0, 10**7),
        "max_rss_bytes": _number(status.get("max_rss_bytes"), 0, 2**62),
    }
    if None in values.values() or status.get("killed_for") not in KILLED_FOR:
        return None
    return {"returncode": returncode, "killed_for": status.get("killed_for"), **values}


def _copy(source: Path, target: Path, limit: int) -> str | None:
    """Copy the regular file ``source`` (no link) to ``target``, at most ``limit`` bytes; why not, or None."""
    try:
        descriptor = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as error:
        return "a link" if error.errno == errno.ELOOP else f"not readable ({error.strerror})"
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size > limit:
            return f"larger than the {limit} bytes the workspace runner sends back"
        with target.open("wb") as out:
            copied = 0
            while block := handle.read(BLOCK):
                copied += len(block)
                if copied > limit:
                    return f"larger than the {limit} bytes the workspace runner sends back"
                out.write(block)
    return None


def collect_outputs(
    plan: dict[str, Any], outputs: Path, copies: Path, limits: SandboxLimits
) -> tuple[list[tuple[Path, str]], list[str]]:
    """(copy, the caller's path) of each output file to send, and ``path: why`` of each one not sent."""
    sent: list[tuple[Path, str]] = []
    refused: list[str] = []
    total = 0
    copies.mkdir(parents=True, exist_ok=True)
    for planned in plan["outputs"]:
        root = outputs / planned["folder"]
        for folder, subfolders, files in os.walk(root):
            subfolders.sort()
            for name in sorted(files):
                source = Path(folder) / name
                caller = planned["path"] + "/" + source.relative_to(root).as_posix()
                if len(sent) >= MAX_OUTPUT_FILES:
                    refused.append(f"{caller}: the workspace runner sends back at most {MAX_OUTPUT_FILES} files")
                    continue
                copy = copies / str(len(sent))
                limit = min(limits.file_size_bytes, MAX_OUTPUTS_BYTES - total)
                why = _copy(source, copy, limit)
                if why is not None:
                    copy.unlink(missing_ok=True)
                    refused.append(f"{caller}: {why}")
                    continue
                sent.append((copy, caller))
                total += copy.stat().st_size
            for name in subfolders:
                if (Path(folder) / name).is_symlink():
                    refused.append(f"{planned['path']}/{(Path(folder) / name).relative_to(root).as_posix()}: a link")
    return sent, refused


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _blob(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def pack_answer(plan: dict[str, Any], results: Path, outputs: Path, work: Path, target: Path) -> None:
    """The answer parcel for the command of ``plan`` into ``target`` (``work``: a folder of the collector's own)."""
    limits = SandboxLimits.model_validate(plan["limits"])
    stdout = _read_capped(results / pod.STDOUT_FILE, limits.output_bytes)
    stderr = _read_capped(results / pod.STDERR_FILE, limits.output_bytes)
    status = read_status(results / pod.STATUS_FILE)
    sent, refused = collect_outputs(plan, outputs, work / "outputs", limits)
    if status is None or "refused" in status:
        returncode = NO_STATUS if status is None else 125
        ending = "the launcher left no readable status" if status is None else f"not run: {status['refused']}"
        outcome = None
    else:
        returncode = status["returncode"]
        outcome = ProcessOutcome(
            returncode=returncode,
            stdout=stdout,
            stderr=stderr,
            duration_s=status["duration_s"],
            cpu_s=status["cpu_s"],
            max_rss_bytes=int(status["max_rss_bytes"]),
            killed_for=status["killed_for"],
        )
        ending = ending_text(returncode, wrapped=False)
    report = SandboxReport(
        mechanism=MECHANISM,
        network_isolation="",
        filesystem_isolation="",
        process_limit="",
        limits=limits,
        limit_exceeded=exceeded_limit(outcome, limits, wrapped=False) if outcome is not None else None,
        ending=ending,
        cpu_s=outcome.cpu_s if outcome is not None else None,
        max_rss_bytes=outcome.max_rss_bytes if outcome is not None else None,
        outputs_written=tuple(caller for _, caller in sent),
        outputs_not_copied=tuple(refused),
    )
    out_text = stdout.decode("utf-8", "replace").encode("utf-8")
    err_text = stderr.decode("utf-8", "replace").encode("utf-8")
    manifest = AnswerManifest.model_validate(
        {
            "protocol": PROTOCOL,
            "returncode": returncode,
            "duration_s": outcome.duration_s if outcome is not None else 0.0,
            "report": wire_report(report),
            "stdout": _blob(out_text),
            "stderr": _blob(err_text),
            "outputs": [{"path": path, "sha256": _sha256(copy), "size": copy.stat().st_size} for copy, path in sent],
        }
    )
    members: list[tuple[str, bytes | Path]] = [
        (ANSWER_MANIFEST, json.dumps(manifest.model_dump(mode="json"), sort_keys=True).encode()),
        (STDOUT_MEMBER, out_text),
        (STDERR_MEMBER, err_text),
        *((output_member(index), copy) for index, (copy, _) in enumerate(sent)),
    ]
    write_parcel(target, members)
