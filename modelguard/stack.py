"""The embedded stack: the Tansu broker, the topics, the keys and the seven services as OS processes, under a
supervisor (``modelguard/supervisor.py``) that starts a service again when it exits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from contracts.registry import all_topics
from libs.bundle.load import Bundle, is_bundle, load_bundle
from libs.bus.doorbell import Doorbells
from libs.bus.embedded_broker import start_embedded_broker
from libs.bus.external_input import read_on_the_bus
from libs.bus.kafka_connection import BUS_PREFIX, SUFFIXES, KafkaConnection
from libs.bus.topics import ensure_topics
from libs.ledger import LedgerStore
from libs.policy.effective import effective_policy_bytes, read_central_policy
from libs.process_liveness import process_ended
from libs.settings import DOORBELLS_ENV, EMBEDDED_FETCH_MAX_WAIT_MS, FETCH_MAX_WAIT_ENV, SCRATCH_DIR_ENV, Settings
from libs.signing.keys import provision_keys
from modelguard.embedded_partitions import embedded_partitions
from modelguard.health_ports import HEALTH_PORTS_ENV, free_ports, with_health_port
from modelguard.memory_scratch import memory_scratch, remove_memory_scratch
from modelguard.replicas import INSTANCE_ENV, ReplicaCountError, instance_names, replica_counts, service_of

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
    services: dict[str, int | None]
    """Each service instance's pid (``diagnoser``, ``diagnoser-2`` with replicas); None while the supervisor waits
    to start it again."""
    supervisor_pid: int | None = None
    restarts: dict[str, int] = field(default_factory=dict)
    exits: dict[str, list[int]] = field(default_factory=dict)
    """Exit codes per service, newest last (negative: the signal that killed it)."""
    health_ports: dict[str, int] = field(default_factory=dict)
    """Each service's loopback port for /healthz, /readyz and /metrics."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "bootstrap": self.bootstrap,
                "broker_pid": self.broker_pid,
                "supervisor_pid": self.supervisor_pid,
                "services": self.services,
                "restarts": self.restarts,
                "exits": self.exits,
                "health_ports": self.health_ports,
            },
            indent=2,
        )


def state_file(home: Path) -> Path:
    return home / "stack.json"


def read_state(home: Path) -> StackState | None:
    path = state_file(home)
    if not path.exists():
        return None
    document = json.loads(path.read_text())
    return StackState(
        document["bootstrap"],
        document.get("broker_pid"),
        dict(document["services"]),
        supervisor_pid=document.get("supervisor_pid"),
        restarts=dict(document.get("restarts") or {}),
        exits={name: list(codes) for name, codes in (document.get("exits") or {}).items()},
        health_ports={name: int(port) for name, port in (document.get("health_ports") or {}).items()},
    )


def write_state(home: Path, state: StackState) -> None:
    """Atomically: a reader sees the old state or the new one, never half of one."""
    path = state_file(home)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(state.to_json())
    os.replace(partial, path)


def pid_alive(pid: int | None) -> bool:
    return pid is not None and pid > 0 and not process_ended(pid)


@cache
def bundled_scenarios() -> tuple[Bundle, ...]:
    """Loaded (and their data checked) once per process: `stack up` reads them three times."""
    return tuple(load_bundle(folder) for folder in sorted(SCENARIOS.iterdir()) if is_bundle(folder))


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


def bus_connection(settings: Settings, state: StackState | None) -> KafkaConnection:
    """The bus a command talks to: the running stack's (its embedded broker: plaintext), else the configured one."""
    if state is None or state.bootstrap == settings.kafka.bootstrap:
        return settings.kafka
    return KafkaConnection(state.bootstrap)


def doorbells_folder(settings: Settings) -> Path:
    """Where the services on a broker the stack owns register their doorbells (``libs/bus/doorbell.py``)."""
    return settings.bus_doorbells or settings.run_dir / "doorbells"


def stack_doorbells(settings: Settings, state: StackState | None) -> Doorbells:
    """What a command that publishes to the running stack rings: the doorbells its services registered (none on a
    broker the stack does not own: they register none there)."""
    if state is None or os.environ.get(DOORBELLS_ENV) == "":
        return Doorbells(None)
    return Doorbells(doorbells_folder(settings))


def mcl_connection(settings: Settings, state: StackState | None) -> KafkaConnection:
    """Where DataHub's MCL topics are: DataHub's Kafka when it is configured apart, else the bus."""
    return bus_connection(settings, state) if settings.mcl_on_the_bus else settings.mcl_kafka


def topics_to_create(settings: Settings, owns_broker: bool) -> list[str]:
    """ModelGuard's topics always, MCL topics named as ours (``modelguard.…``, the datahub-actions action's) too;
    DataHub's MCL topics exist wherever DataHub runs, so only on a broker of our own (the embedded one, a test's)
    that also holds them (DataHub's Kafka not configured apart)."""
    ours = [t for t in settings.mcl_topics if read_on_the_bus(t)]
    datahubs = [t for t in settings.mcl_topics if not read_on_the_bus(t)]
    return [*all_topics(), *ours, *(datahubs if owns_broker and settings.mcl_on_the_bus else [])]


def service_environment(settings: Settings, bootstrap: str) -> dict[str, str]:
    # DataHub, GitHub and object storage credentials (GITHUB_TOKEN, DATAHUB_GMS_*, DATAHUB_MCP_*, AWS_*) pass
    # through, nothing else
    passed = ("MODELGUARD_", "PATH", "LANG", "HOME", "PYTHON", "GITHUB_TOKEN", "DATAHUB_GMS_", "DATAHUB_MCP_", "AWS_")
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


def embedded_broker_environment(settings: Settings, env: dict[str, str]) -> None:
    """What changes in the services' environment when the stack runs its own embedded broker as the bus."""
    for suffix in SUFFIXES[1:]:  # the embedded broker is plaintext: the bus's security settings are not for it
        env.pop(BUS_PREFIX + suffix, None)
    # the embedded broker finds a record only at a waiting fetch's next look (up to about half the wait later): a
    # short wait keeps each hop short, and costs the broker and each idle consumer a look more often
    env.setdefault(FETCH_MAX_WAIT_ENV, str(EMBEDDED_FETCH_MAX_WAIT_MS))
    if settings.mcl_on_the_bus:  # a new, empty broker holds the MCL topics: no DataHub history to skip, and the
        env.setdefault("MODELGUARD_MCL_START", "earliest")  # demo's first MCL may come before the consumer joined


def owned_broker_environment(settings: Settings, env: dict[str, str]) -> None:
    """What changes in the services' environment on a broker the stack owns (its embedded one, a test's, a bench's):
    their readers hold their fetches for a ring of their doorbell (Tansu never answers a waiting fetch early), unless
    ``MODELGUARD_BUS_DOORBELLS`` is set (empty: switched off)."""
    env.setdefault(DOORBELLS_ENV, str(doorbells_folder(settings)))


def start_service(name: str, settings: Settings, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start a service instance (``diagnoser`` or a replica, ``diagnoser-2``): the service's process, its instance
    name in its environment, its own log, ready file and health port."""
    (settings.run_dir / f"{name}.ready").unlink(missing_ok=True)
    instance_env = {**with_health_port(env, name), INSTANCE_ENV: name}
    return _spawn(["-m", f"services.{service_of(name)}.main"], name, settings, instance_env)


def start_supervisor(
    settings: Settings, env: dict[str, str], bootstrap: str, broker_pid: int | None, services: tuple[str, ...]
) -> subprocess.Popen[bytes]:
    return _spawn(
        ["-m", "modelguard.supervisor", bootstrap, str(broker_pid or 0), *services], "supervisor", settings, env
    )


def _spawn(arguments: list[str], log_name: str, settings: Settings, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """ModelGuard's interpreter with ``arguments``, in a session of its own, logging to ``logs/<log_name>.log``."""
    logs = settings.home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / f"{log_name}.log").open("ab") as log:
        return subprocess.Popen(
            [sys.executable, *arguments],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def wait_ready(
    settings: Settings, supervisor: subprocess.Popen[bytes], services: tuple[str, ...], timeout_s: float
) -> StackState:
    """Until every service has said it is ready; a service that exits while starting fails the start (the
    supervisor would start it again, but a service that cannot start is a configuration error to report)."""
    deadline = time.monotonic() + timeout_s
    pending = set(services)
    state = None
    while time.monotonic() < deadline:
        if supervisor.poll() is not None:
            raise StackError(f"the supervisor exited with {supervisor.returncode}; see {settings.home}/logs")
        state = read_state(settings.home)
        if state is not None and state.supervisor_pid == supervisor.pid:
            for name in sorted(pending):
                if state.exits.get(name):
                    raise StackError(f"{name} exited with {state.exits[name][-1]}; see {settings.home}/logs/{name}.log")
                if (settings.run_dir / f"{name}.ready").exists():
                    pending.discard(name)
            if not pending:
                return state
        time.sleep(0.1)
    raise StackError(f"not ready after {timeout_s:.0f}s: {', '.join(sorted(pending))}; see {settings.home}/logs")


def topic_partitions(settings: Settings, owns_broker: bool, counts: dict[str, int] | None = None) -> int:
    """The partitions of each topic the stack creates: ``modelguard/embedded_partitions.py`` on a broker it owns,
    the configured count on anyone else's. ``counts``: processes per service (the environment's when None)."""
    if not owns_broker:
        return settings.kafka_partitions
    if counts is None:
        counts = replica_counts(os.environ, SERVICES, None, settings.kafka_partitions, settings.state_url is not None)
    return embedded_partitions(os.environ, counts, settings.kafka_partitions)


def stack_up(
    settings: Settings,
    external_bootstrap: str | None,
    timeout_s: float = 120.0,
    services: tuple[str, ...] = SERVICES,
    owns_broker: bool = False,
    replicas: dict[str, int] | None = None,
) -> StackState:
    """``owns_broker``: the broker at ``external_bootstrap`` is the caller's own (a test's, a bench's), so DataHub's
    MCL topics may be created there as on the embedded broker; on anyone else's Kafka they are DataHub's.
    ``replicas``: processes per service (``modelguard/replicas.py``; default ``MODELGUARD_REPLICAS_<SERVICE>``, 1)."""
    try:
        counts = replica_counts(
            os.environ, services, replicas, settings.kafka_partitions, settings.state_url is not None
        )
    except ReplicaCountError as exc:
        raise StackError(str(exc)) from None
    instances = tuple(name for service in services for name in instance_names(service, counts[service]))
    existing = read_state(settings.home)
    if existing and (pid_alive(existing.supervisor_pid) or any(pid_alive(p) for p in existing.services.values())):
        raise StackError(f"a stack is already running from {settings.home} (modelguard stack down first)")
    settings.home.mkdir(parents=True, exist_ok=True)
    state_file(settings.home).unlink(missing_ok=True)
    provision_keys([*SERVICES, *CLIENTS], settings.keys_dir)
    install_default_inputs(settings)
    LedgerStore(settings.ledger_url).create_schema()
    broker_pid = None
    if external_bootstrap:
        bootstrap = external_bootstrap
        bus = settings.kafka if external_bootstrap == settings.kafka.bootstrap else KafkaConnection(bootstrap)
    else:
        broker = start_embedded_broker(settings.home / "logs" / "broker.log")
        bootstrap, broker_pid, bus = broker.bootstrap, broker.process.pid, KafkaConnection(broker.bootstrap)
        owns_broker = True
    partitions = topic_partitions(settings, owns_broker, counts)
    asyncio.run(ensure_topics(bus, topics_to_create(settings, owns_broker), partitions))
    env = service_environment(settings, bootstrap)
    env[HEALTH_PORTS_ENV] = json.dumps(free_ports(instances))
    if not env.get(SCRATCH_DIR_ENV):
        scratch = memory_scratch(settings.home)  # workspaces and commands' staging in memory, when there is room
        if scratch is not None:
            env[SCRATCH_DIR_ENV] = str(scratch)
    if broker_pid is not None:
        embedded_broker_environment(settings, env)
    if owns_broker:
        owned_broker_environment(settings, env)
    for name in instances:
        (settings.run_dir / f"{name}.ready").unlink(missing_ok=True)
    supervisor = start_supervisor(settings, env, bootstrap, broker_pid, instances)
    try:
        return wait_ready(settings, supervisor, instances, timeout_s)
    except StackError:
        stack_down(settings)
        raise


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
    if pid_alive(state.supervisor_pid):  # it stops the services it started, and starts none again
        terminate(state.supervisor_pid, grace_s=30.0)  # type: ignore[arg-type]
    for pid in (read_state(settings.home) or state).services.values():
        if pid_alive(pid):
            terminate(pid, grace_s=15.0)  # type: ignore[arg-type]
    if state.broker_pid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(state.broker_pid, signal.SIGKILL)
    state_file(settings.home).unlink(missing_ok=True)
    remove_memory_scratch(settings.home)
    return state


@dataclass(frozen=True)
class ServiceStatus:
    running: bool
    pid: int | None
    restarts: int
    last_exit: int | None
    health_port: int | None = None


def stack_status(settings: Settings) -> dict[str, ServiceStatus]:
    """Each service (and the supervisor, and the embedded broker) as the supervisor last recorded it."""
    state = read_state(settings.home)
    if state is None:
        return {}
    status = {
        name: ServiceStatus(
            pid_alive(pid),
            pid,
            state.restarts.get(name, 0),
            exits[-1] if (exits := state.exits.get(name)) else None,
            state.health_ports.get(name),
        )
        for name, pid in state.services.items()
    }
    status["supervisor"] = ServiceStatus(pid_alive(state.supervisor_pid), state.supervisor_pid, 0, None)
    if state.broker_pid:
        status["broker"] = ServiceStatus(pid_alive(state.broker_pid), state.broker_pid, 0, None)
    return status
