"""The diagnosis as markdown a reviewer can read in a minute: the verdict, where the drop comes from, the
evidence table, and why the runners-up lost.

The text is part of the diagnosis event, which audits re-compute and compare by digest: it is built only
from the outcome's figures (no clock, no scratch paths), so the same inputs always render the same bytes."""

from __future__ import annotations

from services.diagnoser.catalogue.scoring import Contribution, ScoredHypothesis
from services.diagnoser.diagnosis import IncidentDiagnosis

RUNNERS_UP = 3
SUMMARY_CHARS = 160


def render_markdown(outcome: IncidentDiagnosis) -> str:
    lines = [f"# Diagnosis: {_verdict(outcome)}", ""]
    lines += _verdict_details(outcome)
    lines += _counterfactual(outcome)
    lines += _change_isolation(outcome)
    lines += _data_interventions(outcome)
    lines += _evidence_table(outcome)
    lines += _not_computed(outcome)
    lines += _runners_up(outcome)
    lines += _hints(outcome)
    lines += _runs(outcome)
    return "\n".join(lines).rstrip() + "\n"


def _verdict(outcome: IncidentDiagnosis) -> str:
    if outcome.decision == "diagnosed":
        return f"{outcome.chosen_hypothesis} (cause in the {outcome.cause_location})"
    return "abstained"


def _verdict_details(outcome: IncidentDiagnosis) -> list[str]:
    lines = []
    if outcome.decision == "diagnosed":
        lines.append(
            f"**{outcome.chosen_hypothesis}** scores {outcome.confidence:.2f} and leads the runner-up by "
            f"{outcome.margin:.2f} (policy: at least {outcome.thresholds.abstain_below:.2f}, margin "
            f"{outcome.thresholds.min_margin:.2f})."
        )
    else:
        lines.append(f"**No cause named** ({outcome.abstention_code}): {outcome.abstention_reason}.")
        lines.append(f"Best candidate: {outcome.top_hypothesis}.")
    if outcome.suspected is not None:
        where = f"`{outcome.suspected.file}`"
        if outcome.suspected.function:
            where += f", function `{outcome.suspected.function}`"
        if outcome.suspected.lines:
            where += f" (lines {outcome.suspected.lines[0]}-{outcome.suspected.lines[1]})"
        if outcome.suspected.divisor:
            where += f", unguarded division by `{outcome.suspected.divisor}` at line {outcome.suspected.division_line}"
        lines.append(f"Suspected location: {where}.")
    if outcome.invalid_values.base or outcome.invalid_values.candidate:
        lines.append(
            f"Invalid feature values on the same rows: base {outcome.invalid_values.base}, "
            f"candidate {outcome.invalid_values.candidate}."
        )
    return [*lines, ""]


def _counterfactual(outcome: IncidentDiagnosis) -> list[str]:
    cells = outcome.counterfactual
    if not cells or any(value is None for value in cells.values()):
        return ["## Where the drop comes from", "", "Counterfactual runs unavailable.", ""]
    item = next(e for e in outcome.evidence if e.kind == "evaluation.counterfactual_attribution")
    return [
        "## Where the drop comes from",
        "",
        f"| {outcome.metric} | approval window | incident window |",
        "|---|---|---|",
        f"| base | {cells['base_on_approval']:.4f} | {cells['base_on_incident']:.4f} |",
        f"| candidate | {cells['candidate_on_approval']:.4f} | {cells['candidate_on_incident']:.4f} |",
        "",
        item.summary + ".",
        "",
    ]


def _values(outcome: IncidentDiagnosis, kind: str) -> dict | None:
    item = next((e for e in outcome.evidence if e.kind == kind), None)
    return item.values if item is not None and item.values.get("available") else None


def _figure(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:.0%}" if percent else f"{value:.4f}"


def _change_isolation(outcome: IncidentDiagnosis) -> list[str]:
    values = _values(outcome, "code.change_isolation")
    if values is None:
        return []
    units = {unit["id"]: unit for unit in values["units"]}
    lines = [
        "## Change isolation",
        "",
        f"The candidate's change is {len(units)} unit(s); each subset below was applied alone to the base tree and "
        f"evaluated on the incident window ({' then '.join(values['levels']) or 'one unit: no run needed'}).",
        "",
    ]
    if values["subsets"]:
        lines += [f"| units | {outcome.metric} | share of the drop | verdict |", "|---|---|---|---|"]
        for subset in values["subsets"]:
            names = "; ".join(units[i]["describe"] for i in subset["units"])
            lines.append(
                f"| {_clipped(names).replace('|', '/')} | {_figure(subset['metric'])} "
                f"| {_figure(subset['carried'], percent=True)} | {subset['verdict'].replace('_', ' ')} |"
            )
        lines.append("")
    kept = "; ".join(units[i]["describe"] for i in values["minimal"])
    lines.append(f"Carries {_figure(values['carried'], percent=True)} of the drop: {kept}.")
    if values["dropped_paths"]:
        lines.append(f"Carry none of it (measured): {', '.join(values['dropped_paths'])}.")
    if not values["proven"]:
        lines.append("The search stopped before the set was proven minimal (a subset could not be run).")
    for item in values["generated_files"]:
        generator = f" by {item['generator']}" if item["generator"] else ""
        lines.append(f"`{item['path']}` is generated code{generator} ({item['reason']}).")
    return [*lines, ""]


def _data_interventions(outcome: IncidentDiagnosis) -> list[str]:
    values = _values(outcome, "data.interventions")
    if values is None:
        return []
    lines = [
        "## Data interventions",
        "",
        f"Under the base code the data costs {values['data_loss']:.4f} of {outcome.metric}; each intervention below "
        "undoes one kind of fault in the incident window (or leaves its rows out, or restores the label mix):",
        "",
        f"| fault | intervention | columns | {outcome.metric} | won back |",
        "|---|---|---|---|---|",
    ]
    for item in values["interventions"]:
        lines.append(
            f"| {item['kind']} | {item['how'].replace('_', ' ')} | {', '.join(item['columns'])} "
            f"| {_figure(item['metric'])} | {_figure(item['recovered'], percent=True)} |"
        )
    best = values["best"]
    if best and best["recovered"]:
        culprits = ", ".join(values["culprit_columns"] or best["columns"])
        lines += ["", f"Best: {best['kind']} in {culprits}, winning back {best['recovered']:.0%}."]
    else:
        lines += ["", "No intervention wins the loss back."]
    residual = values.get("residual_drift")
    if residual:
        held = "moved" if residual["ks"] >= values["ks_drift"] else "held"
        lines.append(
            f"Within each label group the inputs {held} (largest: {residual['column']}, KS {residual['ks']:.3f}; "
            f"a prior shift leaves them as they were)."
        )
    return [*lines, ""]


def _runs(outcome: IncidentDiagnosis) -> list[str]:
    if not outcome.runs:
        return []
    source = {
        "referee": "computed by ModelGuard from the predictions",
        "self_reported": "self-reported by the workspace",
    }
    lines = [
        "## Runs",
        "",
        f"{outcome.evaluations} evaluation(s) ran ({len(outcome.runs) - (outcome.evaluations or 0)} answered from the "
        f"cache or past the budget); the metric is {source.get(outcome.metric_source or '', 'unknown')}.",
        "",
        f"| run | {outcome.metric} | |",
        "|---|---|---|",
    ]
    for run in outcome.runs:
        note = "cached" if run.cached else (_clipped(run.failure) if run.failure else "")
        lines.append(f"| {run.name} | {_figure(run.metric)} | {note.replace('|', '/')} |")
    return [*lines, ""]


def _evidence_table(outcome: IncidentDiagnosis) -> list[str]:
    lines = ["## Evidence", "", "| id | kind | strength | finding |", "|---|---|---|---|"]
    ordered = sorted(outcome.evidence, key=lambda e: -e.strength)
    for item in ordered:
        summary = _clipped(" ".join(item.summary.split()))
        lines.append(f"| {item.id} | {item.kind} | {item.strength:.2f} | {summary.replace('|', '/')} |")
    return [*lines, ""]


def _not_computed(outcome: IncidentDiagnosis) -> list[str]:
    """Evidence that could not be computed, with the last line of why (a command's exception is there)."""
    missing = [item for item in outcome.evidence if item.values.get("available") is False]
    if not missing:
        return []
    lines = ["## Not computed", ""]
    for item in missing:
        why = str(item.values.get("reason") or item.summary).strip().splitlines() or [item.summary]
        lines.append(f"- {item.kind}: {_clipped(why[0])}" + (f" … `{_clipped(why[-1])}`" if len(why) > 1 else ""))
    return [*lines, ""]


def _clipped(text: str) -> str:
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"


def _runners_up(outcome: IncidentDiagnosis) -> list[str]:
    ranked = list(outcome.hypotheses)
    lines = ["## Hypotheses", "", "| rank | hypothesis | score | for | against |", "|---|---|---|---|---|"]
    for hypothesis in ranked:
        lines.append(
            f"| {hypothesis.rank} | {hypothesis.name} | {hypothesis.score:.2f} "
            f"| {_points(hypothesis.support)}{_scaled(hypothesis)} "
            f"| {_points(hypothesis.counter)} |"
        )
    lines += ["", "### Why the runners-up lost", ""]
    for hypothesis in ranked[1 : 1 + RUNNERS_UP]:
        lines.append(f"- **{hypothesis.name}** ({hypothesis.score:.2f}): {_why_lost(hypothesis)}")
    return [*lines, ""]


def _why_lost(hypothesis: ScoredHypothesis) -> str:
    if not hypothesis.support and not hypothesis.counter:
        return hypothesis.description
    against = sorted(hypothesis.counter, key=lambda c: -c.points)
    if against:
        return "falsified by " + ", ".join(f"{c.fact.value} (-{c.points:.2f})" for c in against[:3])
    return "too little support: only " + ", ".join(f"{c.fact.value} (+{c.points:.2f})" for c in hypothesis.support)


def _points(contributions: tuple[Contribution, ...]) -> str:
    shown = sorted(contributions, key=lambda c: -c.points)[:3]
    return ", ".join(f"{c.fact.value} {c.points:.2f}" for c in shown if c.points > 0) or "—"


def _scaled(hypothesis: ScoredHypothesis) -> str:
    if hypothesis.measured_share == 1.0:
        return ""
    return f" ({hypothesis.measured_share:.0%} of its support could be measured)"


def _hints(outcome: IncidentDiagnosis) -> list[str]:
    hints = outcome.repair_hints
    rows = [
        ("changed functions", ", ".join(f"{s.file}::{s.function}" for s in hints.changed_functions)),
        ("renamed columns", ", ".join(f"{r.old} -> {r.new}" for r in hints.renamed_columns)),
        ("numeric columns as text", ", ".join(hints.text_numeric_columns)),
        ("unseen categories", "; ".join(f"{k}: {', '.join(v[:5])}" for k, v in hints.unseen_categories.items())),
        ("columns whose nulls rose", ", ".join(hints.null_columns)),
    ]
    shown = [(name, value) for name, value in rows if value]
    if not shown:
        return []
    return ["## Repair hints", "", *(f"- {name}: {value}" for name, value in shown), ""]
