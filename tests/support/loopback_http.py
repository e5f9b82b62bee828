"""A threaded HTTP server on 127.0.0.1 that records every request, for fakes of remote APIs.

Subclasses implement `route(request) -> Reply`. Tests can inject failures (`fail`: answer with a status once
or more, before or after the real effect) and hold requests at a barrier (`hold`) so that concurrent clients
really interleave.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Reply:
    status: int
    document: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class _Failure:
    method: str
    pattern: re.Pattern[str]
    reply: Reply
    remaining: int
    after_effect: bool


@dataclass
class _Hold:
    method: str
    pattern: re.Pattern[str]
    barrier: threading.Barrier
    remaining: int


class LoopbackServer:
    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.requests: list[Request] = []
        self._failures: list[_Failure] = []
        self._holds: list[_Hold] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------
    def start(self) -> LoopbackServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                owner._dispatch(self)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- test controls -----------------------------------------------------------------------------
    def fail(
        self,
        method: str,
        path_pattern: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        message: str = "injected failure",
        after_effect: bool = False,
    ) -> None:
        """Answer the next `times` matching requests with `status`; after doing the work if `after_effect`."""
        reply = Reply(status, {"message": message}, headers or {})
        with self.lock:
            self._failures.append(_Failure(method, re.compile(path_pattern), reply, times, after_effect))

    def hold(self, method: str, path_pattern: str, parties: int, timeout_s: float = 60.0) -> None:
        """The next `parties` matching requests are each answered as things stand when it arrives, and the answers
        wait for each other before they are sent. So every party reads the state from before any of them acts on
        its answer: were the answer made after the wait, a party the machine is slow to schedule could read what a
        quicker one wrote meanwhile. ``timeout_s`` only ends a wait that would hang: on a loaded machine the second
        party can take seconds to arrive, and a barrier broken early lets the first go on alone, which is not the
        interleaving the test asks for."""
        with self.lock:
            barrier = threading.Barrier(parties, timeout=timeout_s)
            self._holds.append(_Hold(method, re.compile(path_pattern), barrier, parties))

    def count(self, method: str | None = None, path_pattern: str = "") -> int:
        pattern = re.compile(path_pattern)
        with self.lock:
            return sum(1 for r in self.requests if (method is None or r.method == method) and pattern.search(r.path))

    def writes(self) -> list[Request]:
        with self.lock:
            return [r for r in self.requests if r.method != "GET"]

    # -- serving -----------------------------------------------------------------------------------
    def route(self, request: Request) -> Reply:
        raise NotImplementedError

    def _take(self, items: list[Any], request: Request) -> Any:
        for item in items:
            if item.remaining > 0 and item.method == request.method and item.pattern.search(request.path):
                item.remaining -= 1
                return item
        return None

    def _dispatch(self, handler: BaseHTTPRequestHandler) -> None:
        split = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        request = Request(
            method=handler.command,
            path=split.path,
            query={k: v[0] for k, v in parse_qs(split.query).items()},
            headers={k.lower(): v for k, v in handler.headers.items()},
            body=handler.rfile.read(length) if length else b"",
        )
        with self.lock:
            self.requests.append(request)
            hold = self._take(self._holds, request)
            failure = self._take(self._failures, request)
        if failure is not None and not failure.after_effect:
            reply = failure.reply
        else:
            try:
                reply = self.route(request)
            except Exception as exc:  # a bug in a fake must be visible, not a hang
                reply = Reply(500, {"message": f"fake crashed: {type(exc).__name__}: {exc}"})
            if failure is not None:
                reply = failure.reply
        if hold is not None:  # answered as things stood when it arrived, sent once every party has arrived
            hold.barrier.wait()
        body = b"" if reply.document is None else json.dumps(reply.document).encode()
        handler.send_response(reply.status)
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        if body:
            handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
