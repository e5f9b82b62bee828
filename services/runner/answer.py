"""The answer to one request, in the caller's terms: the runner's own folder taken out of every path and text
(stdout, stderr, the report), the output files the sandbox copied back, each with its digest. What the runner
will not send back (more than MAX_OUTPUT_FILES files, MAX_OUTPUTS_BYTES bytes, a file over the file-size limit)
is listed in ``outputs_not_copied``, which fails the run as it would locally."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import stat
from pathlib import Path
from typing import Any

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
from libs.sandbox.run import SandboxResult
from services.runner.layout import Job

BLOCK = 1 << 16


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def _blob(data: bytes) -> dict[str, Any]:
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def in_caller_terms(report: SandboxReport, root: Path) -> SandboxReport:
    """Every path and text of ``report`` with the runner's folder ``root`` taken out."""
    prefix = str(root)
    changed: dict[str, Any] = {}
    for field in dataclasses.fields(report):
        value = getattr(report, field.name)
        if isinstance(value, str):
            changed[field.name] = value.replace(prefix, "")
        elif isinstance(value, tuple) and all(isinstance(item, str) for item in value):
            changed[field.name] = tuple(item.replace(prefix, "") for item in value)
    return dataclasses.replace(report, **changed)


def _outputs(result: SandboxResult, job: Job) -> tuple[list[tuple[Path, str]], list[str]]:
    """(file, the caller's path) of each output to send, and the ones not sent, with why (caller's terms)."""
    sent: list[tuple[Path, str]] = []
    refused: list[str] = []
    total = 0
    file_limit = result.report.limits.file_size_bytes
    for written in result.report.outputs_written:
        path = Path(written)
        caller = written.replace(str(job.root), "")
        info = path.lstat() if path.is_relative_to(job.root) and path.exists() else None
        if info is None or not stat.S_ISREG(info.st_mode):
            refused.append(f"{caller}: not a regular file of the command's output folders")
        elif len(sent) >= MAX_OUTPUT_FILES:
            refused.append(f"{caller}: the workspace runner sends back at most {MAX_OUTPUT_FILES} files")
        elif info.st_size > file_limit or total + info.st_size > MAX_OUTPUTS_BYTES:
            refused.append(f"{caller}: the workspace runner sends back at most {MAX_OUTPUTS_BYTES} bytes of files")
        else:
            sent.append((path, caller))
            total += info.st_size
    return sent, refused


def write_answer(result: SandboxResult, job: Job, target: Path) -> None:
    sent, refused = _outputs(result, job)
    report = in_caller_terms(result.report, job.root)
    report = dataclasses.replace(
        report,
        outputs_written=tuple(caller for _, caller in sent),
        outputs_not_copied=(*report.outputs_not_copied, *refused),
    )
    stdout = result.stdout.replace(str(job.root), "").encode("utf-8", "replace")
    stderr = result.stderr.replace(str(job.root), "").encode("utf-8", "replace")
    outputs = [{"path": caller, "sha256": _sha256(path), "size": path.stat().st_size} for path, caller in sent]
    manifest = AnswerManifest.model_validate(
        {
            "protocol": PROTOCOL,
            "returncode": result.returncode,
            "duration_s": result.duration_s,
            "report": wire_report(report),
            "stdout": _blob(stdout),
            "stderr": _blob(stderr),
            "outputs": outputs,
        }
    )
    members: list[tuple[str, bytes | Path]] = [
        (ANSWER_MANIFEST, json.dumps(manifest.model_dump(mode="json"), sort_keys=True).encode()),
        (STDOUT_MEMBER, stdout),
        (STDERR_MEMBER, stderr),
        *((output_member(index), path) for index, (path, _) in enumerate(sent)),
    ]
    write_parcel(target, members)
