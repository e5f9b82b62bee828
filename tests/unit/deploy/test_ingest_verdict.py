"""The verdict the CI waits for, from an incident's events, the run's dead letters and the clock: pending,
regressed, then published with its outcome and CI result; or passed; or at once dead-lettered or stuck."""

from __future__ import annotations

from datetime import timedelta

from libs.policy.ci import CiOutcomes, CiPolicy
from services.detector.dead_letter_log import RefusedInput
from services.detector.ingest_verdict import governing_policy, verdict_of
from tests.support.sample_events import (
    START,
    SampleKeys,
    abstained_incident,
    passed_incident,
    repaired_incident,
    sample_incident_id,
)

REFUSED = RefusedInput(
    service="diagnoser",
    source="modelguard.context-collected.v1/0@12",
    reason="handler-error",
    detail="ReadError: invalid header\nTraceback (most recent call last):\n  ...",
)


def test_a_regression_is_pending_then_regressed_then_published_with_its_outcome_and_ci_result() -> None:
    events = repaired_incident(SampleKeys.generate(), "v")
    incident, run = sample_incident_id("v"), "ci-v"

    statuses = [verdict_of(incident, run, events[:n]).status for n in (1, 2, len(events))]
    final = verdict_of(incident, run, events)

    assert statuses == ["pending", "regressed", "published"]
    assert final.finished and (final.outcome, final.ci, final.reason) == ("repair_validated", "fail", None)
    assert final.gate is not None and final.gate["regressed"] is True
    assert final.events == [e.event.meta.event_type for e in events]
    assert verdict_of(incident, "another-run", events).events == []
    assert [verdict_of(incident, run, events[:n]).ci for n in (1, 2)] == [None, None]


def test_the_ci_result_is_the_policys_for_the_outcome() -> None:
    events = repaired_incident(SampleKeys.generate(), "c")
    lenient = CiPolicy(outcomes=CiOutcomes(repair_validated="pass"))
    assert verdict_of(sample_incident_id("c"), "ci-c", events, ci=lenient).ci == "pass"
    strict = CiPolicy(outcomes=CiOutcomes(gate_passed="fail"))
    passed = verdict_of(sample_incident_id("p"), "ci-p", passed_incident(SampleKeys.generate(), "p"), ci=strict)
    assert (passed.status, passed.outcome, passed.ci) == ("passed", "gate_passed", "fail")


def test_a_passed_gate_is_finished_and_passes_by_default() -> None:
    verdict = verdict_of(sample_incident_id("p"), "ci-p", passed_incident(SampleKeys.generate(), "p"))
    assert (verdict.status, verdict.finished, verdict.outcome, verdict.ci) == ("passed", True, "gate_passed", "pass")
    assert verdict.gate is not None and verdict.gate["regressed"] is False


def test_a_dead_letter_of_the_run_finishes_it_at_once_with_the_reason() -> None:
    events = repaired_incident(SampleKeys.generate(), "d")
    incident, run = sample_incident_id("d"), "ci-d"

    early = verdict_of(incident, run, events[:2], dead_letters=[REFUSED])
    before_the_ledger = verdict_of(incident, run, [], dead_letters=[REFUSED])
    published_anyway = verdict_of(incident, run, events, dead_letters=[REFUSED])

    assert (early.status, early.finished, early.ci, early.outcome) == ("dead_lettered", True, None, None)
    assert early.reason == (
        "diagnoser dead-lettered modelguard.context-collected.v1/0@12: handler-error: ReadError: invalid header"
    )
    assert before_the_ledger.status == "dead_lettered"
    assert published_anyway.status == "published", "a finding that was published is the verdict"


def test_a_run_without_a_new_event_for_the_stuck_time_is_stuck() -> None:
    events = abstained_incident(SampleKeys.generate(), "s")  # ends at DiagnosisAbstained, START + 3 s
    incident, run = sample_incident_id("s"), "ci-s"
    last = START + timedelta(seconds=3)

    moving = verdict_of(incident, run, events, now=last + timedelta(seconds=899), stuck_after_s=900)
    stuck = verdict_of(incident, run, events, now=last + timedelta(seconds=901), stuck_after_s=900)
    never = verdict_of(incident, run, events, now=last + timedelta(days=9), stuck_after_s=None)
    nothing_yet = verdict_of(incident, run, [], now=last + timedelta(days=9), stuck_after_s=900)

    assert (moving.status, moving.finished) == ("regressed", False)
    assert (stuck.status, stuck.finished, stuck.ci) == ("stuck", True, None)
    assert stuck.reason == (
        "nothing happened for 901 s since DiagnosisAbstained from diagnoser (a run is stuck after 900 s)"
    )
    assert never.status == "regressed" and nothing_yet.status == "pending"


def test_the_governing_policy_is_the_one_the_run_was_gated_by() -> None:
    events = repaired_incident(SampleKeys.generate(), "g")
    assert governing_policy(events[:1], "ci-g") is None
    gated = governing_policy(events, "ci-g")
    assert gated is not None and gated == events[1].event.payload.policy
    assert governing_policy(events, "another-run") is None
