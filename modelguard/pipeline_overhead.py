"""Where an incident's time goes (`modelguard bench pipeline`): the workspace's own commands, counted and timed from
the services' spans, and everything else, which is ModelGuard's (the bus, verifying and signing, extracting
snapshots, the ledger, its own analysis).

Per incident and per phase, the phase's own work runs from when its service could start (its cause had arrived
and its previous output was out) to its output; the phase's commands are the union of the times its service's
commands ran in the incident's trace within that window (commands run side by side count once): each command's own
process, from being let go to being reaped, where the sandbox measured it, else its whole span. The sandbox's
preparation around the process (its view, cgroup, confinement, the working tree hashed before and after) is
ModelGuard's. ModelGuard's overhead is the
phase's own work less its commands, summed over the phases: queueing behind other incidents is not in it. The
evaluations (`libs/workspace/evaluation_cache.py`) are counted by key: measured, or read from the cache.
"""

from __future__ import annotations

import ast
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from libs.events.codec import SignedEvent
from libs.observability.command_span import CPU_ATTRIBUTE, RAN_FROM_ATTRIBUTE, RAN_UNTIL_ATTRIBUTE
from libs.telemetry import incident_trace_id
from libs.workspace.evaluation_cache import SPAN as EVALUATION_SPAN
from modelguard.process_cpu import CpuSpent
from modelguard.summary import PHASE_OF

COMMAND_SPAN = "workspace command"
SERVICE_PREFIX = "modelguard-"


@dataclass(frozen=True)
class CommandSpan:
    service: str
    trace_id: str
    label: str
    """What ran, without its paths: ``predict.py``, ``pytest``, ``churn_model.features``, ``python -c``."""
    start: float
    end: float
    cpu_s: float | None = None
    """The CPU seconds its processes used, where the sandbox measured them."""


@dataclass(frozen=True)
class EvaluationSpan:
    service: str
    trace_id: str
    key: str
    cached: bool


@dataclass(frozen=True)
class Delivery:
    """When a service took an input: the start of its consumer's ``process`` span."""

    service: str
    trace_id: str
    at: float


@dataclass(frozen=True)
class Spans:
    commands: list[CommandSpan]
    evaluations: list[EvaluationSpan]
    deliveries: list[Delivery] = field(default_factory=list)


def read_spans(path: Path) -> Spans:
    commands: list[CommandSpan] = []
    evaluations: list[EvaluationSpan] = []
    deliveries: list[Delivery] = []
    for line in path.read_text().splitlines() if path.exists() else []:
        span = json.loads(line)
        service = str(span.get("service") or "").removeprefix(SERVICE_PREFIX)
        attributes = span.get("attributes") or {}
        if span["name"].startswith(COMMAND_SPAN):
            start, end = _ran(attributes, span["start_ns"] / 1e9, span["end_ns"] / 1e9)
            label = command_label(attributes.get("process.command_args", "()"))
            cpu_s = _seconds(attributes.get(CPU_ATTRIBUTE))
            commands.append(CommandSpan(service, span["trace_id"], label, start, end, cpu_s))
        elif span["name"] == EVALUATION_SPAN:
            cached = attributes.get("modelguard.evaluation.cached") == "True"
            evaluations.append(
                EvaluationSpan(service, span["trace_id"], attributes.get("modelguard.evaluation.key", ""), cached)
            )
        elif attributes.get("messaging.operation") == "process":
            deliveries.append(Delivery(service, span["trace_id"], span["start_ns"] / 1e9))
    return Spans(commands, evaluations, deliveries)


def _ran(attributes: dict[str, object], start: float, end: float) -> tuple[float, float]:
    """When the command's own process ran, where the sandbox said (within its span); else the whole span. The span
    also holds ModelGuard's work around the process: the sandbox's view, cgroup and confinement before, its check
    of the working tree after; that is ModelGuard's time, not the command's."""
    ran_from, ran_until = _seconds(attributes.get(RAN_FROM_ATTRIBUTE)), _seconds(attributes.get(RAN_UNTIL_ATTRIBUTE))
    if ran_from is None or ran_until is None or not start <= ran_from <= ran_until <= end:
        return start, end
    return ran_from, ran_until


def _seconds(value: object) -> float | None:
    """A span attribute's seconds (the span file writes attributes as text); None when absent or not a duration."""
    if value is None:
        return None
    try:
        seconds = float(str(value))
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def command_label(argv_text: str) -> str:
    """``('python', 'predict.py', …)`` -> ``predict.py``; ``-m module`` -> the module; ``-c`` -> ``python -c``."""
    try:
        argv = [str(a) for a in ast.literal_eval(argv_text)]
    except (ValueError, SyntaxError):
        return "?"
    argv = argv[:1] + _without_interpreter_flags(argv[1:])
    if len(argv) >= 3 and argv[1] == "-m":
        return argv[2]
    if len(argv) >= 2 and argv[1] == "-c":
        return "python -c"
    return Path(argv[1]).name if len(argv) >= 2 else (Path(argv[0]).name if argv else "?")


INTERPRETER_FLAGS_WITH_A_VALUE = frozenset({"-X", "-W"})


def _without_interpreter_flags(arguments: list[str]) -> list[str]:
    """The arguments from ``-c``, ``-m`` or the script on (``-I``, ``-X utf8`` and the like dropped)."""
    index = 0
    while index < len(arguments) and arguments[index].startswith("-") and arguments[index] not in ("-c", "-m"):
        index += 2 if arguments[index] in INTERPRETER_FLAGS_WITH_A_VALUE else 1
    return arguments[index:]


def union_seconds(intervals: Iterable[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


@dataclass
class IncidentTime:
    incident_id: str
    end_to_end: float
    own_work: float
    """The phases' own work, queueing excluded."""
    commands: float
    """The workspace's commands within that work (side by side counted once)."""
    by_phase: dict[str, float] = field(default_factory=dict)
    """ModelGuard's overhead per phase: the phase's own work less its commands."""
    waited_by_phase: dict[str, float] = field(default_factory=dict)
    """Of each phase's overhead: from when it could start to when its service took the input (the bus delivering
    it: the previous service publishing it, the broker, the consumer's fetch)."""
    runs: Counter[tuple[str, str]] = field(default_factory=Counter)
    """(service, command) -> how many times it ran."""
    command_seconds: dict[tuple[str, str], float] = field(default_factory=dict)

    @property
    def overhead(self) -> float:
        return self.own_work - self.commands

    @property
    def waited(self) -> float:
        return sum(self.waited_by_phase.values())

    @property
    def handling(self) -> float:
        """Of the overhead: from taking each input to its output, less the commands (verifying, claiming,
        extracting, ModelGuard's own analysis, signing)."""
        return self.overhead - self.waited


def incident_times(done: dict[str, list[SignedEvent]], spans: Spans) -> list[IncidentTime]:
    """Each incident's time split into its commands and ModelGuard's; ``done``: each incident's events."""
    windows = _phase_windows(done)
    by_trace: dict[str, list[CommandSpan]] = defaultdict(list)
    for command in spans.commands:
        by_trace[command.trace_id].append(command)
    taken: dict[tuple[str, str], list[float]] = defaultdict(list)
    for delivery in spans.deliveries:
        taken[(delivery.trace_id, delivery.service)].append(delivery.at)
    times: list[IncidentTime] = []
    for incident, events in done.items():
        trace = incident_trace_id(events[0].event.meta.incident_id)
        commands = by_trace.get(trace, [])
        first, last = events[0].event.meta.occurred_at, events[-1].event.meta.occurred_at
        time = IncidentTime(incident, (last - first).total_seconds(), 0.0, 0.0)
        for command in commands:
            time.runs[(command.service, command.label)] += 1
            key = (command.service, command.label)
            time.command_seconds[key] = time.command_seconds.get(key, 0.0) + command.end - command.start
        for service, phase, began, finished in windows.get(incident, []):
            inside = [
                (max(c.start, began), min(c.end, finished))
                for c in commands
                if c.service == service and c.end > began and c.start < finished
            ]
            ran = union_seconds(inside)
            time.own_work += finished - began
            time.commands += ran
            time.by_phase[phase] = time.by_phase.get(phase, 0.0) + (finished - began - ran)
            took = min((at for at in taken.get((trace, service), []) if began <= at <= finished), default=began)
            time.waited_by_phase[phase] = time.waited_by_phase.get(phase, 0.0) + took - began
        times.append(time)
    return times


@dataclass(frozen=True)
class AtOnce:
    """Incidents reported together, against the machine's floor for them: their workspace commands' CPU time spread
    over the cores (ModelGuard's own work is not in the floor: the wall time over it is what ModelGuard adds)."""

    incidents: int
    wall_s: float
    commands: int
    measured: int
    """Commands with a CPU reading (a command on a runner or in a Job may have none)."""
    commands_cpu_s: float
    cores: int

    @property
    def floor_s(self) -> float:
        return self.commands_cpu_s / self.cores

    @property
    def ratio(self) -> float | None:
        return self.wall_s / self.floor_s if self.floor_s > 0 else None

    def line(self) -> str:
        ratio = "not measured (no command reported its CPU time)" if self.ratio is None else f"{self.ratio:.2f}"
        return (
            f"{self.incidents} incidents at once: {self.wall_s:.1f} s wall; their {self.commands} workspace commands "
            f"used {self.commands_cpu_s:.1f} CPU-s ({self.measured} of {self.commands} measured), "
            f"{self.floor_s:.1f} s spread over {self.cores} cores; wall / that floor {ratio} (goal ≤ 1.3)"
        )


def at_once(done: dict[str, list[SignedEvent]], spans: Spans, wall_s: float, cores: int) -> AtOnce:
    """``done``: the incidents reported together (each one's events); ``wall_s``: from reporting them to the last
    one's publication."""
    traces = {incident_trace_id(events[0].event.meta.incident_id) for events in done.values()}
    commands = [c for c in spans.commands if c.trace_id in traces]
    measured = [c.cpu_s for c in commands if c.cpu_s is not None]
    return AtOnce(len(done), wall_s, len(commands), len(measured), sum(measured), cores)


def services_cpu_line(spent: CpuSpent, incidents: int, together: AtOnce) -> str:
    """What ModelGuard's own processes (and the broker) used while the incidents ran, beside their commands: all
    of it over the cores is how much of the wall time the machine was busy; the rest it waited."""
    ours = {name: s for name, s in spent.by_name.items() if name != "broker"}
    broker = spent.by_name.get("broker")
    own = spent.total_s - (broker or 0.0)
    parts = ", ".join(f"{name} {s:.1f}" for name, s in sorted(ours.items()) if s is not None)
    busy = (own + (broker or 0.0) + together.commands_cpu_s) / together.cores
    missing = f"; not measured: {', '.join(spent.unmeasured)}" if spent.unmeasured else ""
    per_incident = own / incidents if incidents else float("nan")
    broker_text = "not measured" if broker is None else f"{broker:.1f} CPU-s"
    return (
        f"ModelGuard's services used {own:.1f} CPU-s ({per_incident:.2f} per incident: {parts}), the broker "
        f"{broker_text}; with the commands' {together.commands_cpu_s:.1f} CPU-s that keeps {together.cores} cores "
        f"busy {busy:.1f} s of the {together.wall_s:.1f} s wall{missing}"
    )


def _phase_windows(done: dict[str, list[SignedEvent]]) -> dict[str, list[tuple[str, str, float, float]]]:
    """Per incident: (service, phase, began, finished) of each output, began being when its service could start."""
    outputs: list[tuple[str, str, datetime, datetime]] = []  # (incident, service, cause time, output time)
    for incident, events in done.items():
        by_id = {e.event.meta.event_id: e for e in events}
        for e in events:
            cause = by_id.get(e.event.meta.causation_id or "")
            if cause is not None:
                outputs.append(
                    (incident, e.event.meta.producer, cause.event.meta.occurred_at, e.event.meta.occurred_at)
                )
    windows: dict[str, list[tuple[str, str, float, float]]] = defaultdict(list)
    previous: dict[str, datetime] = {}
    for incident, service, arrived, finished in sorted(outputs, key=lambda o: o[3]):
        began = max(arrived, previous[service]) if service in previous else arrived
        previous[service] = finished
        phase = PHASE_OF.get(service, service)
        windows[incident].append((service, phase, began.timestamp(), finished.timestamp()))
    return windows


def measured_twice(evaluations: Sequence[EvaluationSpan]) -> dict[str, int]:
    """Evaluation keys measured more than once in the run (each should be measured once, then read)."""
    counts = Counter(e.key for e in evaluations if not e.cached)
    return {key: n for key, n in counts.items() if n > 1}
