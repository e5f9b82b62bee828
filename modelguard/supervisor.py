"""The embedded stack's supervisor: starts the services, starts again any that exits (``supervision``'s
backoff), and stops them all on SIGTERM. ``modelguard stack up`` runs it as its own process
(``python -m modelguard.supervisor BOOTSTRAP BROKER_PID SERVICE...``, environment as the services get it);
it keeps ``stack.json`` in the home current: pids, restarts and exit codes, for ``modelguard stack status``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from types import FrameType

from libs.settings import load_settings
from modelguard.health_ports import health_ports_from
from modelguard.stack import StackState, start_service, terminate, write_state
from modelguard.supervision import RestartPolicy, ServiceRecord

POLL_S = 0.2


class Supervisor:
    def __init__(self, bootstrap: str, broker_pid: int | None, names: list[str], policy: RestartPolicy) -> None:
        self.settings = load_settings()
        self.env = dict(os.environ)
        self.bootstrap = bootstrap
        self.broker_pid = broker_pid
        self.policy = policy
        self.records = {name: ServiceRecord(name) for name in names}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.stopping = False
        self.random = random.Random()

    def run(self) -> int:
        for name in self.records:
            self._start(name, restart=False)
        self._write()
        while not self.stopping:
            changed = self._watch(time.monotonic())
            if changed:
                self._write()
            time.sleep(POLL_S)
        self._stop_all()
        return 0

    def stop(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True

    def _watch(self, now: float) -> bool:
        changed = False
        for name, record in self.records.items():
            process = self.processes.get(name)
            if process is not None and (code := process.poll()) is not None:
                del self.processes[name]
                delay = record.exited(code, now, self.policy, self.random.random()) - now
                print(f"supervisor: {name} exited with {code}; starting it again in {delay:.1f}s", flush=True)
                changed = True
            if record.next_start is not None and now >= record.next_start and not self.stopping:
                self._start(name, restart=True)
                changed = True
        return changed

    def _start(self, name: str, restart: bool) -> None:
        process = start_service(name, self.settings, self.env)
        self.processes[name] = process
        self.records[name].started(process.pid, time.monotonic(), restart)

    def _stop_all(self) -> None:
        for process in self.processes.values():
            terminate(process.pid, grace_s=15.0)
            process.poll()

    def _write(self) -> None:
        records = self.records.values()
        write_state(
            self.settings.home,
            StackState(
                self.bootstrap,
                self.broker_pid,
                {record.name: record.pid for record in records},
                supervisor_pid=os.getpid(),
                restarts={record.name: record.restarts for record in records},
                exits={record.name: record.exits for record in records if record.exits},
                health_ports=health_ports_from(self.env),
            ),
        )


def main(argv: list[str]) -> int:
    bootstrap, broker, *names = argv
    supervisor = Supervisor(bootstrap, int(broker) or None, names, RestartPolicy())
    signal.signal(signal.SIGTERM, supervisor.stop)
    signal.signal(signal.SIGINT, supervisor.stop)
    return supervisor.run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
