"""The incidents list over projections folded from signed sample incidents: filters by exact value, and the
unfinished incidents that have not moved for a while are named and can be listed alone."""

from __future__ import annotations

from datetime import timedelta

import pytest

from libs.ledger import project
from modelguard.console.incident_list import BadFilter, incident_list
from tests.support.sample_events import START, SampleKeys, abstained_incident, repaired_incident, sample_incident_id


@pytest.fixture(scope="module")
def projections():  # type: ignore[no-untyped-def]
    keys = SampleKeys.generate()
    events = [
        *repaired_incident(keys, "done"),
        *repaired_incident(keys, "stalled")[:3],
        *abstained_incident(keys, "abstained", start=START + timedelta(hours=1)),
    ]
    return project(e.event for e in events)


def _ids(listing) -> list[str]:  # type: ignore[no-untyped-def]
    return [row.projection.incident_id for row in listing.rows]


def test_newest_activity_first_and_filters_by_exact_outcome_and_status(projections) -> None:  # type: ignore[no-untyped-def]
    now = START + timedelta(hours=2)
    done, stalled, abstained = (sample_incident_id(n) for n in ("done", "stalled", "abstained"))
    assert _ids(incident_list(projections, {}, now))[0] == abstained
    assert _ids(incident_list(projections, {"outcome": "none"}, now)) == [abstained, stalled]  # nothing published
    assert _ids(incident_list(projections, {"status": "published"}, now)) == [done]
    assert incident_list(projections, {}, now).options["status"] == ["abstained", "open", "published"]
    unknown = incident_list(projections, {"status": "lost"}, now)
    assert _ids(unknown) == [] and unknown.unknown == ["no incident has status 'lost'"]


def test_unfinished_incidents_quiet_for_a_while_are_counted_and_listed_alone(projections) -> None:  # type: ignore[no-untyped-def]
    stalled = sample_incident_id("stalled")
    early = incident_list(projections, {"quiet": "10"}, START + timedelta(minutes=5))
    assert _ids(early) == [] and early.stuck == 0
    late = incident_list(projections, {"quiet": "10"}, START + timedelta(minutes=30))
    assert _ids(late) == [stalled] and late.stuck == 1
    assert late.rows[0].unfinished and late.rows[0].quiet == "29 min"
    assert _ids(incident_list(projections, {"quiet": "60"}, START + timedelta(minutes=30))) == []
    for bad in ("ten", "-1", "1.5", "99999999999"):
        with pytest.raises(BadFilter, match="quiet takes whole minutes"):
            incident_list(projections, {"quiet": bad}, START)
