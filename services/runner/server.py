"""The runner's HTTP server: ``POST /v1/commands`` runs one command (``handler.py``), ``GET /healthz`` and
``GET /readyz`` answer probes. A request must declare its length (at most MAX_REQUEST_BYTES) and its type; at
most ADMITTED_PER_SLOT requests per slot are received at once (onto the runner's own disk, each read bounded by
READ_TIMEOUT_S); each then waits for one of the runner's ``concurrency`` slots as long as its manifest's
``queue_s`` allows before it is refused as busy. Every refusal is JSON ``{"refused", "reason"}`` with a 4xx/5xx
status; the answer is the parcel with its length."""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from libs.bus.health import HealthState
from libs.sandbox.remote.protocol import (
    ALIVE_PATH,
    COMMANDS_PATH,
    MAX_REQUEST_BYTES,
    PARCEL_TYPE,
    READY_PATH,
    REFUSAL_TYPE,
)
from services.runner.handler import Refused, read_request, run_request

log = logging.getLogger("modelguard.runner")
BLOCK = 1 << 16
ADMITTED_PER_SLOT = 4
READ_TIMEOUT_S = 60.0


@dataclass
class RunnerState:
    workdir: Path
    concurrency: int
    health: HealthState
    not_ready: str | None
    """Why commands cannot run here (no sandbox), None when they can."""

    def __post_init__(self) -> None:
        self.slots = threading.BoundedSemaphore(self.concurrency)
        self.admitted = threading.BoundedSemaphore(self.concurrency * ADMITTED_PER_SLOT)


class RunnerServer(ThreadingHTTPServer):
    daemon_threads = False  # on shutdown, server_close waits for the commands in flight (the pod's grace period)

    def __init__(self, address: tuple[str, int], state: RunnerState) -> None:
        self.state = state
        super().__init__(address, _handler_for(state))

    def service_actions(self) -> None:  # the serving loop beats: a wedged loop stops the liveness probe
        self.state.health.beat()

    def stop(self) -> None:
        """Stop taking requests (and say so to the readiness probe); the serving loop then ends."""
        self.state.health.ready = False
        self.state.not_ready = "shutting down"
        threading.Thread(target=self.shutdown, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self.socket.getsockname()[:2]  # what server_address holds for a TCP server, typed
        return f"http://{host}:{port}"


def _handler_for(state: RunnerState) -> type[BaseHTTPRequestHandler]:
    class Runner(BaseHTTPRequestHandler):
        timeout = READ_TIMEOUT_S
        server_version = "modelguard-runner"
        sys_version = ""

        def do_GET(self) -> None:
            if self.path == ALIVE_PATH:
                self._text(200 if state.health.alive else 503, "ok" if state.health.alive else "not alive")
            elif self.path == READY_PATH:
                self._text(503, state.not_ready) if state.not_ready else self._text(200, "ready")
            else:
                self._text(404, "not found")

        def do_POST(self) -> None:
            self.close_connection = True
            try:
                length = self._admitted()
                if not state.admitted.acquire(blocking=False):
                    self._drain(length)
                    raise Refused("busy", f"{state.concurrency * ADMITTED_PER_SLOT} requests are here already")
                try:
                    self._run(length)
                finally:
                    state.admitted.release()
            except Refused as refused:
                self._refuse(refused)
            except Exception as error:  # a bug of the runner's: the caller gets a reason, the runner keeps serving
                log.exception("the command failed inside the runner")
                self._refuse(Refused("internal", f"the runner failed: {type(error).__name__}"))

        def _admitted(self) -> int:
            if self.path != COMMANDS_PATH:
                raise Refused("bad_request", f"no route {self.path[:100]!r}; commands go to {COMMANDS_PATH}")
            kind = (self.headers.get("Content-Type") or "").split(";")[0].strip()
            if kind != PARCEL_TYPE:
                raise Refused("bad_request", f"a request is a {PARCEL_TYPE} parcel, not {kind[:60] or 'untyped'}")
            declared = self.headers.get("Content-Length") or ""
            if not declared.isdigit():
                raise Refused("bad_request", "a request must declare its Content-Length")
            if int(declared) > MAX_REQUEST_BYTES:
                raise Refused("too_large", f"a request may take at most {MAX_REQUEST_BYTES} bytes")
            return int(declared)

        def _drain(self, length: int) -> None:
            left = length
            while left > 0 and (block := self.rfile.read(min(BLOCK, left))):
                left -= len(block)

        def _receive(self, target: Path, length: int) -> None:
            left = length
            with target.open("wb") as out:
                while left > 0:
                    block = self.rfile.read(min(BLOCK, left))
                    if not block:
                        raise Refused("bad_request", f"the request ended {left} bytes before its Content-Length")
                    out.write(block)
                    left -= len(block)

        def _run(self, length: int) -> None:
            with tempfile.TemporaryDirectory(prefix="modelguard-runner-", dir=state.workdir) as folder:
                work = Path(folder)
                request = work / "request.tar"
                try:
                    self._receive(request, length)
                except TimeoutError:
                    raise Refused("bad_request", f"the request stalled for {READ_TIMEOUT_S:g} s") from None
                parcel, manifest = read_request(request, work)
                if not state.slots.acquire(timeout=manifest.queue_s):
                    raise Refused(
                        "busy", f"every one of {state.concurrency} slots stayed taken for {manifest.queue_s:g} s"
                    )
                try:
                    answer, result = run_request(parcel, manifest, work)
                finally:
                    state.slots.release()
                report = result.report
                log.info(
                    "ran %s: %s in %.3f s (%s%s)",
                    " ".join(result.argv[:2])[:200],
                    report.ending,
                    result.duration_s,
                    report.mechanism,
                    f", {report.limit_exceeded}" if report.limit_exceeded else "",
                )
                self.send_response(200)
                self.send_header("Content-Type", PARCEL_TYPE)
                self.send_header("Content-Length", str(answer.stat().st_size))
                self.end_headers()
                with answer.open("rb") as handle:
                    shutil.copyfileobj(handle, self.wfile, BLOCK)

        def _refuse(self, refused: Refused) -> None:
            log.info("refused a request (%s): %s", refused.kind, refused.reason[:300])
            body = json.dumps({"refused": refused.kind, "reason": refused.reason[:4000]}).encode()
            self._send(refused.status, REFUSAL_TYPE, body)

        def _text(self, status: int, text: str) -> None:
            self._send(status, "text/plain; charset=utf-8", (text + "\n").encode())

        def _send(self, status: int, kind: str, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the caller went away
                pass

        def log_message(self, format: str, *args: object) -> None:  # probes every few seconds: not logged
            return

    return Runner
