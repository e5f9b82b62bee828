"""The remote adapter behind ``libs.workspace.runner.run_command``: one workspace command handed to the
workspace runner (``MODELGUARD_RUNNER``) instead of this process's own bubblewrap, with the same result.

The caller keeps its own checks: the program allow-list and a working directory inside a secret are refused
here before anything is sent; its protected paths decide what is sent (``shipment.py``: a secret named on the
command line is never sent and fails the run); the working directory is hashed before and after; the answer is
checked whole before any of it is used (``answer.py``). The runner is reached over HTTP with one deadline for
the whole exchange: the time the request may wait for a free slot on the runner (one more wall time), the
command's wall time, and ``MODELGUARD_RUNNER_MARGIN_S``.

Failures are exceptions every caller of ``run_command`` already handles: ``RunnerUnavailable`` (cannot be
reached, busy, refused the request; a ``CommandNotAllowed``), ``SandboxUnavailable`` (the runner has no
sandbox), ``RunnerAnswerRejected`` (a malformed, oversized or unsafe answer; a ``CommandNotAllowed``),
``RunnerTimedOut`` (no answer in time; ``run_command`` raises ``CommandTimedOut``)."""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import os
import socket
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError

from libs.policy.sandbox import SandboxPolicy
from libs.sandbox.command_start import command_started
from libs.sandbox.integrity import TreeChanges, compare_trees, hash_tree
from libs.sandbox.isolation import SandboxUnavailable
from libs.sandbox.process import CommandNotAllowed, resolve_program
from libs.sandbox.protected_paths import protected_paths
from libs.sandbox.remote.answer import Accepted, accept_answer
from libs.sandbox.remote.protocol import (
    COMMANDS_PATH,
    MAX_REFUSAL_BYTES,
    PARCEL_TYPE,
    READY_PATH,
    Refusal,
    RunnerAnswerRejected,
    RunnerTimedOut,
    RunnerUnavailable,
    answer_limit,
)
from libs.sandbox.remote.request import RequestParcel, queue_s, write_request
from libs.sandbox.remote.shipment import Shipment, fixed_folders, plan_shipment
from libs.sandbox.report import SandboxReport
from libs.sandbox.run import SandboxResult
from libs.settings import RunnerSettings

BLOCK = 1 << 16
CONNECT_TIMEOUT_S = 10.0
READY_TIMEOUT_S = 10.0


def _dedupe(*groups: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for group in groups for item in group))


class _Exchange:
    """One HTTP exchange with the runner under one deadline: a watchdog shuts the socket down when it passes."""

    def __init__(self, url: str, deadline_s: float) -> None:
        parts = urlsplit(url)
        self.url = url
        self.base = parts.path.rstrip("/")
        self.total_s = deadline_s
        self.deadline = time.monotonic() + deadline_s
        self.expired = threading.Event()
        connection = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.connection = connection(parts.hostname or "", parts.port, timeout=min(CONNECT_TIMEOUT_S, deadline_s))
        self.watchdog = threading.Timer(deadline_s, self._expire)
        self.watchdog.daemon = True

    def _expire(self) -> None:
        self.expired.set()
        sock = self.connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.timed_out()
        return left

    def timed_out(self) -> RunnerTimedOut:
        return RunnerTimedOut(f"the workspace runner at {self.url} did not answer within {self.total_s:g} s")

    def __enter__(self) -> _Exchange:
        self.watchdog.start()
        try:
            self.connection.connect()
        except OSError as error:
            if self.expired.is_set() or isinstance(error, TimeoutError):
                raise self.timed_out() from None
            raise RunnerUnavailable(
                f"refused to run workspace code: the workspace runner at {self.url} cannot be reached: {error}"
            ) from None
        return self

    def __exit__(self, *exc: object) -> None:
        self.watchdog.cancel()
        self.connection.close()

    def _timeout(self) -> None:
        sock = self.connection.sock
        if sock is not None:
            sock.settimeout(self.remaining())

    def post(self, parcel: Path) -> http.client.HTTPResponse:
        sent_error: OSError | None = None
        try:
            self.connection.putrequest("POST", self.base + COMMANDS_PATH)
            self.connection.putheader("Content-Type", PARCEL_TYPE)
            self.connection.putheader("Content-Length", str(parcel.stat().st_size))
            self.connection.putheader("Accept", PARCEL_TYPE)
            self.connection.endheaders()
            with parcel.open("rb") as handle:
                for block in iter(lambda: handle.read(BLOCK), b""):
                    self._timeout()
                    self.connection.send(block)
        except OSError as error:  # the runner may have answered early (too large, busy) and closed
            if self.expired.is_set() or isinstance(error, TimeoutError):
                raise self.timed_out() from None
            sent_error = error
        try:
            self._timeout()
            return self.connection.getresponse()
        except (OSError, http.client.HTTPException) as error:
            if self.expired.is_set() or isinstance(error, TimeoutError):
                raise self.timed_out() from None
            why = sent_error or error
            raise RunnerUnavailable(
                f"refused to run workspace code: the workspace runner at {self.url} broke off: "
                f"{type(why).__name__}: {why}"
            ) from None

    def read(self, response: http.client.HTTPResponse, limit: int, target: Path | None) -> bytes:
        """The body, at most ``limit`` bytes (into ``target`` when given, else returned)."""
        declared = response.getheader("Content-Length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            raise RunnerAnswerRejected(
                f"the workspace runner's answer exceeds {limit} bytes (Content-Length {declared[:30]})"
            )
        kept: list[bytes] = []
        total = 0
        try:
            with target.open("wb") if target is not None else open(os.devnull, "wb") as out:
                while True:
                    self._timeout()
                    block = response.read1(BLOCK)
                    if not block:
                        break
                    total += len(block)
                    if total > limit:
                        raise RunnerAnswerRejected(f"the workspace runner's answer exceeds {limit} bytes")
                    if target is None:
                        kept.append(block)
                    else:
                        out.write(block)
        except (OSError, http.client.HTTPException) as error:
            if self.expired.is_set() or isinstance(error, TimeoutError):
                raise self.timed_out() from None
            raise RunnerAnswerRejected(
                f"the workspace runner's answer broke off after {total} bytes: {type(error).__name__}"
            ) from None
        return b"".join(kept)


def _refused(status: int, body: bytes, url: str) -> Exception:
    try:
        refusal = Refusal.model_validate_json(body)
    except ValidationError:
        return RunnerUnavailable(f"refused to run workspace code: the workspace runner at {url} answered HTTP {status}")
    where = f"the workspace runner at {url}"
    if refusal.refused == "not_allowed":
        return CommandNotAllowed(f"{refusal.reason} ({where})")
    if refusal.refused == "sandbox_unavailable":
        return SandboxUnavailable(f"{refusal.reason} (on {where})")
    if refusal.refused == "start_failed":
        return OSError(f"{refusal.reason} (on {where})")
    return RunnerUnavailable(
        f"refused to run workspace code: {where} answered HTTP {status} ({refusal.refused}): {refusal.reason}"
    )


def _exchange(runner: RunnerSettings, parcel: Path, policy: SandboxPolicy, answer: Path) -> None:
    assert runner.url is not None
    with _Exchange(runner.url, queue_s(policy) + policy.limits.wall_s + runner.answer_margin_s) as exchange:
        response = exchange.post(parcel)
        if response.status != 200:
            raise _refused(response.status, exchange.read(response, MAX_REFUSAL_BYTES, None), runner.url)
        kind = (response.getheader("Content-Type") or "").split(";")[0].strip()
        if kind != PARCEL_TYPE:
            raise RunnerAnswerRejected(f"the workspace runner answered {kind[:60] or 'no content type'}, not a parcel")
        exchange.read(response, answer_limit(policy.limits), answer)


def _union(a: TreeChanges, b: TreeChanges) -> TreeChanges:
    return TreeChanges(
        created=tuple(sorted({*a.created, *b.created})),
        modified=tuple(sorted({*a.modified, *b.modified})),
        deleted=tuple(sorted({*a.deleted, *b.deleted})),
    )


def _report(
    accepted: Accepted, shipment: Shipment, request: RequestParcel, changes: TreeChanges, url: str
) -> SandboxReport:
    report = accepted.report
    return dataclasses.replace(
        report,
        workspace_changes=_union(report.workspace_changes, changes),
        refused_inputs=_dedupe(shipment.refused_inputs, request.refused_inputs, report.refused_inputs),
        refused_outputs=_dedupe(shipment.refused_outputs, report.refused_outputs),
        outputs_written=accepted.written,
        outputs_not_copied=_dedupe(report.outputs_not_copied, accepted.not_copied),
        runner=url,
    )


def run_remote(argv: Sequence[str], cwd: Path, policy: SandboxPolicy, runner: RunnerSettings) -> SandboxResult:
    """Run ``argv`` in ``cwd`` on the workspace runner ``runner.url``, as ``run_sandboxed`` would here."""
    if runner.url is None:
        raise ValueError("no workspace runner is configured (MODELGUARD_RUNNER)")
    resolve_program(argv)  # the same allow-list, before anything is sent
    cwd = Path(os.path.realpath(cwd))
    protected = protected_paths(policy.hidden)
    secret = protected.secret_holding(cwd)
    if secret is not None:
        raise CommandNotAllowed(f"refused to run in {cwd}: it lies inside the protected {secret}")
    shipment = plan_shipment(list(argv), cwd, protected, fixed_folders())
    before = hash_tree(cwd)
    with tempfile.TemporaryDirectory(prefix="modelguard-remote-") as folder:
        work = Path(folder)
        request = write_request(shipment, policy, protected, work)
        command_started()  # what is left of it is the runner's work
        _exchange(runner, request.parcel, policy, work / "answer.tar")
        accepted = accept_answer(work / "answer.tar", shipment, policy, work / "answer")
    changes = compare_trees(before, hash_tree(cwd))
    return SandboxResult(
        argv=list(argv),
        returncode=accepted.returncode,
        stdout=accepted.stdout,
        stderr=accepted.stderr,
        duration_s=accepted.duration_s,
        report=_report(accepted, shipment, request, changes, runner.url),
    )


def runner_readiness(runner: RunnerSettings) -> str | None:
    """None when the workspace runner answers that it is ready, else why not (one line)."""
    assert runner.url is not None
    try:
        with _Exchange(runner.url, READY_TIMEOUT_S) as exchange:
            exchange.connection.request("GET", exchange.base + READY_PATH)
            response = exchange.connection.getresponse()
            body = exchange.read(response, MAX_REFUSAL_BYTES, None)
    except (RunnerUnavailable, RunnerTimedOut, RunnerAnswerRejected) as error:
        return str(error).removeprefix("refused to run workspace code: ")
    except (OSError, http.client.HTTPException) as error:
        return f"the workspace runner at {runner.url} broke off: {type(error).__name__}: {error}"
    if response.status == 200:
        return None
    text = body.decode("utf-8", "replace").strip().splitlines()
    return f"the workspace runner at {runner.url} is not ready: {(text or [f'HTTP {response.status}'])[0][:500]}"
