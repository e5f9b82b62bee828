"""The workspace runner as a real process on loopback (``python -m services.runner.main``), and a fake runner
that answers whatever a test gives it (a hostile or broken runner), for tests of the remote adapter."""

from __future__ import annotations

import http.client
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 120.0


def _lines(stream: object, into: queue.Queue[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        into.put(line)


def ready(url: str) -> bool:
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=5)
    try:
        connection.request("GET", "/readyz")
        return connection.getresponse().status == 200
    except OSError:
        return False
    finally:
        connection.close()


@contextmanager
def runner_process(home: Path, extra_env: dict[str, str] | None = None, *, wait_ready: bool = True) -> Iterator[str]:
    """A runner on a free loopback port, with its own MODELGUARD_HOME and no other MODELGUARD_* variable of the
    test's; yields its URL once it answers that it is ready (``wait_ready``), else once it listens."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("MODELGUARD_")}
    env.update(
        {
            "MODELGUARD_HOME": str(home),
            "MODELGUARD_RUNNER_HOST": "127.0.0.1",
            "MODELGUARD_RUNNER_PORT": "0",
            "PYTHONPATH": str(REPO),
            **(extra_env or {}),
        }
    )
    log = (home / "runner.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "services.runner.main"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=_lines, args=(process.stdout, lines), daemon=True).start()
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        url = ""
        while not url:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"the runner did not start: {(home / 'runner.log').read_text()[-2000:]}") from None
            if line.startswith("listening on "):
                url = line.removeprefix("listening on ").strip()
        while wait_ready and not ready(url):
            assert process.poll() is None, (home / "runner.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "the runner never became ready"
            time.sleep(0.05)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)
        log.close()


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/x-tar"})
    length: bool = True
    """Send Content-Length (else the body ends when the connection closes)."""
    zeros: int = 0
    """Then this many zero bytes, streamed."""


class FakeRunner:
    """A runner that reads each request and answers ``answer(request_body)``; ``hold`` makes it never answer
    (until the test ends)."""

    def __init__(self, answer: Callable[[bytes], Reply] | None = None, hold: bool = False) -> None:
        self.answer = answer or (lambda body: Reply())
        self.hold = hold
        self.released = threading.Event()
        self.requests: list[bytes] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requests.append(body)
                if owner.hold:
                    owner.released.wait(120)
                    return
                reply = owner.answer(body)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.length:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                try:
                    self.wfile.write(reply.body)
                    left = reply.zeros
                    while left > 0:
                        left -= self.wfile.write(bytes(min(left, 1 << 20))) or 0
                except OSError:  # the caller stopped reading
                    pass
                self.close_connection = True

            def log_message(self, format: str, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeRunner:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()
