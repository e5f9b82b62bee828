"""The diagnosis's evaluations as a bar chart, laid out here and drawn as inline SVG by the template: each
(revision, window) run with its gate metric, the baseline and the gate's threshold as lines."""

from __future__ import annotations

import math
from dataclasses import dataclass

from contracts.common import GateResult
from contracts.events.diagnosis import DiagnosisReport

HEIGHT = 280
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 20, 70
SLOT = 110


@dataclass(frozen=True)
class Bar:
    name: str
    lines: tuple[str, ...]
    """The label under the bar, a line each (``base_on_incident`` -> ``base``, ``on incident``)."""
    value: float | None
    failure: str | None
    kind: str
    """"base", "candidate" or "other": the revision it ran."""
    x: float
    y: float
    width: float
    height: float


@dataclass(frozen=True)
class Rule:
    y: float
    text: str
    kind: str


@dataclass(frozen=True)
class Chart:
    metric: str
    width: float
    height: float
    left: float
    right: float
    top: float
    bottom: float
    bars: list[Bar]
    ticks: list[Rule]
    rules: list[Rule]
    """The baseline and the gate's threshold."""

    @property
    def description(self) -> str:
        shown = ", ".join(f"{b.name} {_fmt(b.value)}" for b in self.bars)
        return f"{self.metric} per evaluation run: {shown}"


def counterfactual_chart(report: DiagnosisReport, gate: GateResult | None) -> Chart | None:
    """None when the diagnosis ran no evaluation."""
    runs: list[tuple[str, float | None, str | None]] = [(r.name, r.metric, r.failure) for r in report.runs]
    if not runs:
        runs = [(name, value, None) for name, value in report.counterfactual.items()]
    if not runs:
        return None
    references = _references(gate)
    values = [v for _, v, _ in runs if v is not None] + [v for v, _, _ in references]
    low, high = _domain(values)
    width = LEFT + RIGHT + SLOT * len(runs)
    bottom = HEIGHT - BOTTOM

    def y(value: float) -> float:
        return round(bottom - (value - low) / (high - low) * (bottom - TOP), 2)

    bars = []
    for index, (name, value, failure) in enumerate(runs):
        top = y(value) if value is not None else bottom
        bars.append(
            Bar(
                name=name,
                lines=_label(name),
                value=value,
                failure=failure,
                kind=_revision(name),
                x=LEFT + SLOT * index + SLOT * 0.2,
                y=top,
                width=SLOT * 0.6,
                height=round(bottom - top, 2),
            )
        )
    step = _step(high - low)
    ticks = [Rule(y(t), _fmt(t), "tick") for t in _ticks(low, high, step)]
    rules = [Rule(y(v), f"{text} {_fmt(v)}", kind) for v, text, kind in references]
    return Chart(gate.metric if gate else "metric", width, HEIGHT, LEFT, width - RIGHT, TOP, bottom, bars, ticks, rules)


def _references(gate: GateResult | None) -> list[tuple[float, str, str]]:
    if gate is None:
        return []
    sign = -1 if gate.direction == "higher_is_better" else 1
    return [
        (gate.baseline, "baseline", "baseline"),
        (gate.baseline + sign * gate.tolerance, "gate threshold", "threshold"),
    ]


def _domain(values: list[float]) -> tuple[float, float]:
    low, high = min(values), max(values)
    span = high - low or max(abs(high) * 0.1, 0.1)
    step = _step(span * 1.6)
    low = math.floor((low - span * 0.3) / step) * step
    high = math.ceil((high + span * 0.15) / step) * step
    if min(values) >= 0 > low:
        low = 0.0
    return low, high if high > low else low + step


def _step(span: float) -> float:
    raw = span / 5
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)


def _ticks(low: float, high: float, step: float) -> list[float]:
    count = round((high - low) / step)
    return [round(low + i * step, 10) for i in range(count + 1)]


def _label(name: str) -> tuple[str, ...]:
    revision, on, window = name.partition("_on_")
    return (revision.replace("_", " "), f"on {window.replace('_', ' ')}") if on else (name.replace("_", " "),)


def _revision(name: str) -> str:
    head = name.split("_", 1)[0]
    return head if head in ("base", "candidate") else "other"


def _fmt(value: float | None) -> str:
    return "failed" if value is None else f"{value:.4f}".rstrip("0").rstrip(".") if value != 0 else "0"
