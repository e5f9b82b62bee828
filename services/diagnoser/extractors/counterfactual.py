"""Counterfactual attribution: does the drop follow the code or the data?

The four runs are the gate metric of each (revision, window) pair. With ``loss`` the metric turned so that
higher is worse, and the total drop ``D = loss(candidate, incident) - loss(base, approval)``:

- code effect = mean over the windows of loss(candidate, w) - loss(base, w);
- data effect = mean over the revisions of loss(r, incident) - loss(r, approval);
- interaction = (candidate - base on incident) - (candidate - base on approval); code + data = D exactly.

Where the cause is: reverting the code on the incident window recovers ``code_share`` of the drop and the
base code loses ``data_share`` to the data alone (``code_share + data_share = 1``). In Shapley terms that is
the code effect plus half the interaction: a candidate that breaks only on the new data is charged with the
break, because the base code handled the same data.
"""

from __future__ import annotations

from services.diagnoser.evidence import Evidence, EvidenceKind, EvidenceSource, make_evidence
from services.diagnoser.inputs import CounterfactualMetrics, GateSpec

METHOD = (
    "gate metric of base and candidate on the approval and incident windows; code effect = mean over windows of "
    "candidate - base, data effect = mean over revisions of incident - approval (both turned so a drop is "
    "positive); code share = (candidate - base on the incident window) / total drop"
)


def counterfactual_evidence(metrics: CounterfactualMetrics, gate: GateSpec) -> Evidence:
    cells = {
        "base_on_approval": metrics.base_on_approval,
        "base_on_incident": metrics.base_on_incident,
        "candidate_on_approval": metrics.candidate_on_approval,
        "candidate_on_incident": metrics.candidate_on_incident,
    }
    if any(value is None for value in cells.values()):
        missing = [name for name, value in cells.items() if value is None]
        return make_evidence(
            EvidenceKind.COUNTERFACTUAL,
            subject=gate.metric,
            values={
                **cells,
                "available": False,
                "missing": missing,
                "direction": gate.direction,
                "failures": {name: metrics.failures[name] for name in missing if name in metrics.failures},
            },
            summary=f"counterfactual attribution unavailable: no metric for {', '.join(missing)}"
            + "".join(f"; {name}: {metrics.failures[name]}" for name in missing if name in metrics.failures),
            source=EvidenceSource.EVALUATION,
            strength=0.0,
            method=METHOD,
        )
    sign = 1.0 if gate.direction == "lower_is_better" else -1.0
    loss = {name: sign * float(value) for name, value in cells.items() if value is not None}
    drop = loss["candidate_on_incident"] - loss["base_on_approval"]
    code_on_approval = loss["candidate_on_approval"] - loss["base_on_approval"]
    code_on_incident = loss["candidate_on_incident"] - loss["base_on_incident"]
    data_on_base = loss["base_on_incident"] - loss["base_on_approval"]
    data_on_candidate = loss["candidate_on_incident"] - loss["candidate_on_approval"]
    code_effect = (code_on_approval + code_on_incident) / 2
    data_effect = (data_on_base + data_on_candidate) / 2
    regressed = drop > gate.tolerance
    code_share = _share(code_on_incident, drop)
    data_share = _share(data_on_base, drop)
    attributed = _attribution_beyond_noise(code_on_incident, data_on_base, gate.tolerance)
    values = {
        **cells,
        "available": True,
        "direction": gate.direction,
        "tolerance": gate.tolerance,
        "drop": round(drop, 6),
        "regressed": regressed,
        "code_effect": round(code_effect, 6),
        "data_effect": round(data_effect, 6),
        "interaction": round(code_on_incident - code_on_approval, 6),
        "code_effect_share": _share(code_effect, drop),
        "data_effect_share": _share(data_effect, drop),
        "code_on_approval": round(code_on_approval, 6),
        "code_on_incident": round(code_on_incident, 6),
        "data_on_base": round(data_on_base, 6),
        "data_on_candidate": round(data_on_candidate, 6),
        "code_share": code_share,
        "data_share": data_share,
        "code_attribution": attributed[0],
        "data_attribution": attributed[1],
    }
    summary = (
        f"{gate.metric} dropped by {drop:.4f}: reverting the code on the incident window recovers "
        f"{_percent(code_share)} of it, the base code loses {_percent(data_share)} to the data alone "
        f"(code effect {code_effect:+.4f}, data effect {data_effect:+.4f}, interaction "
        f"{code_on_incident - code_on_approval:+.4f}); beyond the tolerance as noise, "
        f"{_percent(attributed[0])} follows the code and {_percent(attributed[1])} the data"
        if regressed
        else f"{gate.metric} moved by {-drop:+.4f} (a drop of {drop:.4f}), within the tolerance {gate.tolerance}"
    )
    return make_evidence(
        EvidenceKind.COUNTERFACTUAL,
        subject=gate.metric,
        values=values,
        summary=summary,
        source=EvidenceSource.EVALUATION,
        strength=1.0 if regressed else 0.0,
        method=METHOD,
    )


def _attribution_beyond_noise(code_loss: float, data_loss: float, tolerance: float) -> tuple[float, float]:
    """How the drop divides between code and data once each side's loss within the gate's tolerance is taken
    as noise: windows differ a little even for the same code, and that alone fails no gate. Falls back to
    the raw losses when neither side exceeds the tolerance."""
    code_excess, data_excess = max(0.0, code_loss - tolerance), max(0.0, data_loss - tolerance)
    if code_excess + data_excess <= 0:
        code_excess, data_excess = max(0.0, code_loss), max(0.0, data_loss)
    total = code_excess + data_excess
    if total <= 0:
        return 0.0, 0.0
    return round(code_excess / total, 4), round(data_excess / total, 4)


def _share(part: float, drop: float) -> float | None:
    if drop <= 0:
        return None
    return round(part / drop, 4)


def _percent(share: float | None) -> str:
    return "n/a" if share is None else f"{share:.0%}"
