"""The embedded stack: the Tansu broker, the topics, the keys and the seven services as OS processes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from contracts.registry import all_topics
from libs.bundle.effective_policy import effective_policy_bytes, read_central_policy
from libs.bundle.load import Bundle, is_bundle, load_bundle
from libs.bus.embedded_broker import start_embedded_broker
from libs.bus.topics import ensure_topics
from libs.ledger import LedgerStore
from libs.settings import Settings
from libs.signing.keys import provision_keys

SERVICES = ("ledger", "detector", "context", "diagnoser", "repairer", "validator", "publisher")
CLIENTS = ("reporter",)
REPO_ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = REPO_ROOT / "fixtures" / "scenarios"


class StackError(RuntimeError):
    pass


@dataclass(frozen=True)
class StackState:
    bootstrap: str
    broker_pid: int | None
    services: dict[str, int]

    def to_json(self) -> str:
        return json.dumps(
            {"bootstrap": self.bootstrap, "broker_pid": self.broker_pid, "services": self.services}, indent=2
        )


def state_file(home: Path) -> Path:
    return home / "stack.json"


def read_state(home: Path) -> StackState | None:
    path = state_file(home)
    if not path.exists():
        return None
    document = json.loads(path.read_text())
    return StackState(document["bootstrap"], document.get("broker_pid"), dict(document["services"]))


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return True


def bundled_scenarios() -> list[Bundle]:
    return [load_bundle(folder) for folder in sorted(SCENARIOS.iterdir()) if is_bundle(folder)]


def install_default_inputs(settings: Settings) -> None:
    """The effective policies of the bundled scenarios, unless the operator configured their own."""
    settings.policy_dir.mkdir(parents=True, exist_ok=True)
    central = read_central_policy(settings.central_policy)
    for bundle in bundled_scenarios():
        target = settings.policy_dir / f"{bundle.name}.yaml"
        if not target.exists():
            target.write_bytes(effective_policy_bytes(bundle, central))


def default_datahub_files() -> tuple[Path, ...]:
    """The bundled scenarios' metadata, relative to the services' working directory (the repository), so
    snapshot provenance reads the same on every machine."""
    return tuple(b.metadata_file.relative_to(REPO_ROOT) for b in bundled_scenarios() if b.metadata_file)


def default_change_files() -> tuple[Path, ...]:
    return tuple(b.changes_file.relative_to(REPO_ROOT) for b in bundled_scenarios() if b.changes_file)


def service_environment(settings: Settings, bootstrap: str) -> dict[str, str]:
    # DataHub and GitHub credentials (GITHUB_TOKEN, DATAHUB_GMS_*, DATAHUB_MCP_*) pass through, nothing else
    passed = ("MODELGUARD_", "PATH", "LANG", "HOME", "PYTHON", "GITHUB_TOKEN", "DATAHUB_GMS_", "DATAHUB_MCP_")
    env = {k: v for k, v in os.environ.items() if k.startswith(passed)}
    env.update(
        MODELGUARD_HOME=str(settings.home),
        MODELGUARD_KAFKA_BOOTSTRAP=bootstrap,
        MODELGUARD_LEDGER_URL=settings.ledger_url,
        MODELGUARD_TRACE_FILE=str(settings.trace_file or settings.home / "traces.jsonl"),
    )
    if not settings.datahub_files:
        env["MODELGUARD_DATAHUB_FILES"] = os.pathsep.join(str(p) for p in default_datahub_files())
        env["MODELGUARD_DATAHUB_CHANGES"] = os.pathsep.join(str(p) for p in default_change_files())
    return env


def start_service(name: str, settings: Settings, env: dict[str, str]) -> subprocess.Popen[bytes]:
    logs = settings.home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (settings.run_dir / f"{name}.ready").unlink(missing_ok=True)
    with (logs / f"{name}.log").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", f"services.{name}.main"],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def wait_ready(settings: Settings, processes: dict[str, subprocess.Popen[bytes]], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    pending = set(processes)
    while pending and time.monotonic() < deadline:
        for name in sorted(pending):
            if processes[name].poll() is not None:
                raise StackError(
                    f"{name} exited with {processes[name].returncode}; see {settings.home}/logs/{name}.log"
                )
            if (settings.run_dir / f"{name}.ready").exists():
                pending.discard(name)
        time.sleep(0.1)
    if pending:
        raise StackError(f"not ready after {timeout_s:.0f}s: {', '.join(sorted(pending))}; see {settings.home}/logs")


def stack_up(
    settings: Settings,
    external_bootstrap: str | None,
    timeout_s: float = 120.0,
    services: tuple[str, ...] = SERVICES,
) -> StackState:
    existing = read_state(settings.home)
    if existing and any(pid_alive(pid) for pid in existing.services.values()):
        raise StackError(f"a stack is already running from {settings.home} (modelguard stack down first)")
    settings.home.mkdir(parents=True, exist_ok=True)
    provision_keys([*SERVICES, *CLIENTS], settings.keys_dir)
    install_default_inputs(settings)
    LedgerStore(settings.ledger_url).create_schema()
    broker_pid = None
    if external_bootstrap:
        bootstrap = external_bootstrap
    else:
        broker = start_embedded_broker(settings.home / "logs" / "broker.log")
        bootstrap, broker_pid = broker.bootstrap, broker.process.pid
    # DataHub's MCL topics exist wherever DataHub runs; only missing ones are created (the embedded broker)
    asyncio.run(ensure_topics(bootstrap, [*all_topics(), *settings.mcl_topics], settings.kafka_partitions))
    env = service_environment(settings, bootstrap)
    processes = {name: start_service(name, settings, env) for name in services}
    state = StackState(bootstrap, broker_pid, {name: p.pid for name, p in processes.items()})
    state_file(settings.home).write_text(state.to_json())
    wait_ready(settings, processes, timeout_s)
    return state


def restart_service(settings: Settings, name: str, timeout_s: float = 60.0) -> int:
    state = read_state(settings.home)
    if state is None:
        raise StackError("no stack is running")
    process = start_service(name, settings, service_environment(settings, state.bootstrap))
    wait_ready(settings, {name: process}, timeout_s)
    services = dict(state.services, **{name: process.pid})
    state_file(settings.home).write_text(StackState(state.bootstrap, state.broker_pid, services).to_json())
    return process.pid


def terminate(pid: int, grace_s: float) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.05)
    if pid_alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGKILL)


def stack_down(settings: Settings) -> StackState | None:
    state = read_state(settings.home)
    if state is None:
        return None
    for pid in state.services.values():
        terminate(pid, grace_s=15.0)
    if state.broker_pid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(state.broker_pid, signal.SIGKILL)
    state_file(settings.home).unlink(missing_ok=True)
    return state


def stack_status(settings: Settings) -> dict[str, bool]:
    state = read_state(settings.home)
    if state is None:
        return {}
    status = {name: pid_alive(pid) for name, pid in state.services.items()}
    if state.broker_pid:
        status["broker"] = pid_alive(state.broker_pid)
    return status
