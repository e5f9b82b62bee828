"""The demo's summary (``summary.json``) said in sentences: every figure is read from the summary, which reads it
from the verified incident log. What each figure means is in the README ("What the demo's summary says")."""

from __future__ import annotations

from typing import Any

PHASE_ORDER = ("detect", "context", "diagnose", "repair", "validate", "publish")


PUBLICATION_NAMES = {
    "github": "the GitHub comment, review and check run",
    "datahub": "the DataHub incident",
    "datahub-assertion": "the gate's DataHub assertion",
    "datahub-assertion-run": "the assertion's run for this evaluation",
}
"""What each publication kind (``modelguard.summary.publication_kind``) is, in words."""


def _statuses(channels: dict[str, str]) -> str:
    said = [f"{PUBLICATION_NAMES.get(kind, kind)} {status}" for kind, status in sorted(channels.items())]
    return ", ".join(said) or "nothing"


def _names(items: list[str]) -> str:
    return ", ".join(items) if items else "none"


def _score(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.4f}"


def summary_sentences(summary: dict[str, Any]) -> list[str]:
    """One sentence per figure of the summary, in the order the incident went."""
    metric, diagnosis, sandbox = summary["metric"], summary["diagnosis"], summary["sandbox"]
    invalid, tests, publication = summary["invalid_values"], summary["tests"], summary["publication"]
    ledger, timings, attestation = summary["ledger"], summary["timings"], summary["attestation"]
    lines = [
        f"Incident {summary['incident_id']}: {len(summary['events'])} events in the ledger.",
        f"The gate on {metric['name']}: the base revision scored {_score(metric['baseline'])} and the candidate "
        f"{_score(metric['candidate'])}, with a tolerance of {metric['tolerance']}; the metric was computed by "
        f"{metric['computed_by']}.",
        f"Workspace code ran in {sandbox.get('mechanism', 'an unknown sandbox')}, with network "
        f"{sandbox.get('network_isolation', 'isolation unknown')} and files "
        f"{sandbox.get('filesystem_isolation', 'isolation unknown')}.",
    ]
    if diagnosis["hypothesis"] is None:
        lines.append("The diagnoser abstained: no single cause stood out.")
    else:
        lines.append(f"The diagnosis names {diagnosis['hypothesis']}, with confidence {diagnosis['confidence']:.2f}.")
    if invalid["before"] is not None:
        after = "not measured" if invalid["after"] is None else invalid["after"]
        lines.append(
            f"The candidate's feature code produced {invalid['before']} invalid feature values (empty, unparsable or "
            f"non-finite) on the incident window; after the repair, {after}."
        )
    if tests["passed"] is not None:
        lines.append(
            f"After the repair {metric['name']} is {_score(metric['after_repair'])}; the repository's tests: "
            f"{tests['passed']} passed, {tests['failed']} failed."
        )
    lines.append(
        f"Published: {_statuses(publication['first'])}; the CI retry of the same incident: "
        f"{_statuses(publication['repeat'])}."
    )
    verdict = "verify" if ledger["verified"] else "do NOT verify"
    lines.append(f"The incident's {ledger['events']} ledger events {verdict} (hashes, signatures, causation links).")
    per_phase = timings["per_phase_s"]
    phases = ", ".join(f"{p} {per_phase[p]:.1f} s" for p in PHASE_ORDER if p in per_phase)
    lines.append(
        f"From the evaluation report to the publication took {timings['end_to_end_s']:.1f} s "
        f"(time from each phase's input to its output: {phases or 'none recorded'})."
    )
    processes = summary["processes"]
    lines.append(
        f"{len(processes)} services ran as their own processes: "
        + ", ".join(f"{name} (pid {pid})" for name, pid in processes.items())
        + "."
    )
    if attestation["digest"] is None:
        lines.append("No attestation was published.")
    else:
        verdict = "verifies" if attestation["verified"] else "does NOT verify"
        lines.append(
            f"The publication's attestation sha256:{attestation['digest'][:16]}… {verdict} offline with the public "
            f"keys; it covers {_names(attestation.get('subject', []))}."
        )
    risk = summary.get("risk")
    if risk:
        cause = risk["cause"].replace("_", " ")
        lines.append(
            f"Act 2: a {cause} upstream puts models {_names(risk['models'])} at risk, with deployments "
            f"{_names(risk['deployments'])}; owners told: {_names(risk['owners'])} (incident {risk['incident_id']}, "
            f"published: {_statuses(risk['publication'])})."
        )
    return lines
