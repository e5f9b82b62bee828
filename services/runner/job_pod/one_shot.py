"""The HTTP of a workspace Job's pod roles: a plain server on the pod's port that serves until one exchange has
succeeded or its deadline passes. Every request must carry the Job's bearer token, checked against the sha256 the
Job's spec holds (the token itself is only in the caller's memory): the model's container shares the pod's
network, so without the token it gets 401 and nothing else. One request at a time, each read bounded in time."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer

from libs.sandbox.remote.protocol import REFUSAL_TYPE

log = logging.getLogger("modelguard.job_pod")
READ_TIMEOUT_S = 60.0
MAX_REASON = 4000


@dataclass
class Reply:
    status: int
    kind: str
    body: bytes | None = None
    file: str | None = None
    """A file to send as the body instead of ``body``."""
    done: bool = False
    """The role's one exchange succeeded (once sent, the server stops)."""
    failed: bool = False
    """The role refused the caller's request for good (once sent, the server stops and the role exits 1)."""


def refusal(status: int, kind: str, reason: str, *, failed: bool = False) -> Reply:
    body = json.dumps({"refused": kind, "reason": reason[:MAX_REASON]}).encode()
    return Reply(status, REFUSAL_TYPE, body, failed=failed)


Route = Callable[[BaseHTTPRequestHandler], Reply]


def token_matches(header: str | None, token_sha256: str) -> bool:
    scheme, _, token = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return False
    given = hashlib.sha256(token.strip().encode()).hexdigest()
    return hmac.compare_digest(given, token_sha256)


class OneShotServer(HTTPServer):
    def __init__(self, port: int, token_sha256: str, routes: dict[tuple[str, str], Route]) -> None:
        self.token_sha256 = token_sha256
        self.routes = routes
        self.outcome: Reply | None = None
        super().__init__(("", port), _Handler)

    def serve_until(self, deadline_s: float) -> Reply | None:
        """Serve until a reply marked done or failed was sent, or ``deadline_s`` passed (None)."""
        deadline = time.monotonic() + deadline_s
        while self.outcome is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.timeout = min(left, 1.0)
            self.handle_request()
        return self.outcome


class _Handler(BaseHTTPRequestHandler):
    server: OneShotServer
    timeout = READ_TIMEOUT_S
    server_version = "modelguard-job-pod"
    sys_version = ""

    def _serve(self, method: str) -> None:
        self.close_connection = True
        route = self.server.routes.get((method, self.path))
        if route is None:
            reply = refusal(404, "bad_request", f"no route {method} {self.path[:100]!r}")
        elif not token_matches(self.headers.get("Authorization"), self.server.token_sha256):
            reply = refusal(401, "not_allowed", "this pod answers only the caller that created its Job")
        else:
            try:
                reply = route(self)
            except TimeoutError:
                reply = refusal(400, "bad_request", f"the request stalled for {READ_TIMEOUT_S:g} s")
            except Exception as error:  # a bug of ours: the caller gets a reason, the role ends
                log.exception("the role failed")
                reply = refusal(500, "internal", f"the job pod failed: {type(error).__name__}", failed=True)
        sent = self._send(reply)
        if (sent and reply.done) or reply.failed:  # a failed role ends even when its refusal was not read
            self.server.outcome = reply

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _send(self, reply: Reply) -> bool:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.kind)
            if reply.file is not None:
                with open(reply.file, "rb") as handle:
                    handle.seek(0, 2)
                    self.send_header("Content-Length", str(handle.tell()))
                    self.end_headers()
                    handle.seek(0)
                    while block := handle.read(1 << 16):
                        self.wfile.write(block)
            else:
                body = reply.body or b""
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            self.wfile.flush()
        except OSError:  # the caller went away: the exchange did not succeed
            return False
        return True

    def log_message(self, format: str, *args: object) -> None:
        log.info("%s %s", self.command, self.path[:100])
