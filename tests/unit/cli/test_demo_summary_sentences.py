"""The demo's summary is printed as sentences, each figure in words, no Python dict in sight."""

from __future__ import annotations

from typing import Any

from modelguard.demo_report import summary_sentences


def _summary(**changes: Any) -> dict[str, Any]:
    summary: dict[str, Any] = {
        "incident_id": "inc-1cfa3123b7272aca",
        "events": ["EvaluationReported", "RegressionDetected", "ContextCollected", "Published"],
        "metric": {
            "name": "f1",
            "baseline": 0.81234,
            "candidate": 0.61,
            "after_repair": 0.8123,
            "tolerance": 0.02,
            "computed_by": "ModelGuard (referee)",
        },
        "sandbox": {"mechanism": "bubblewrap", "network_isolation": "none", "filesystem_isolation": "read-only"},
        "invalid_values": {"before": 412, "after": 0},
        "tests": {"passed": 9, "failed": 0},
        "diagnosis": {"hypothesis": "feature_transformation", "confidence": 0.8312},
        "publication": {
            "first": {"github": "created", "datahub": "created", "datahub-assertion-run": "created"},
            "repeat": {"github": "noop", "datahub-assertion-run": "created"},
        },
        "ledger": {"events": 14, "verified": True},
        "processes": {"ledger": 101, "detector": 102},
        "timings": {"end_to_end_s": 41.25, "per_phase_s": {"publish": 0.4, "detect": 7.3, "diagnose": 20.0}},
        "attestation": {"digest": "ab" * 32, "verified": True, "subject": ["patch"]},
        "risk": {
            "cause": "schema_change",
            "models": ["urn:li:mlModel:churn"],
            "deployments": [],
            "owners": ["urn:li:corpuser:ana"],
            "incident_id": "inc-2",
            "publication": {"datahub": "created"},
        },
    }
    summary.update(changes)
    return summary


def test_every_figure_is_a_sentence() -> None:
    text = "\n".join(summary_sentences(_summary()))
    assert "{" not in text and "}" not in text and "[" not in text
    assert "the base revision scored 0.8123 and the candidate 0.6100, with a tolerance of 0.02" in text
    assert "412 invalid feature values" in text and "after the repair, 0." in text
    assert (
        "Published: the DataHub incident created, the assertion's run for this evaluation created, the GitHub "
        "comment, review and check run created; the CI retry of the same incident: the assertion's run for this "
        "evaluation created, the GitHub comment, review and check run noop."
    ) in text
    assert "The incident's 14 ledger events verify" in text
    assert (
        "took 41.2 s (time from each phase's input to its output: detect 7.3 s, diagnose 20.0 s, publish 0.4 s)" in text
    )
    assert "2 services ran as their own processes: ledger (pid 101), detector (pid 102)." in text
    assert f"sha256:{'ab' * 8}… verifies offline" in text
    assert "deployments none" in text
    assert "Act 2: a schema change upstream puts models urn:li:mlModel:churn at risk" in text


def test_an_abstention_and_a_broken_ledger_are_said_plainly() -> None:
    lines = summary_sentences(
        _summary(
            diagnosis={"hypothesis": None, "confidence": None},
            ledger={"events": 9, "verified": False},
            attestation={"digest": None, "verified": False},
        )
    )
    assert "The diagnoser abstained: no single cause stood out." in lines
    assert "The incident's 9 ledger events do NOT verify (hashes, signatures, causation links)." in lines
    assert "No attestation was published." in lines
