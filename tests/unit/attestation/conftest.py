"""One signed, causally chained incident (detect → publish) and real keys for every producer."""

from __future__ import annotations

import pytest

from libs.events.codec import SignedEvent
from tests.support.sample_events import SampleKeys, repaired_incident


@pytest.fixture(scope="session")
def keys() -> SampleKeys:
    return SampleKeys.generate()


@pytest.fixture(scope="session")
def incident(keys: SampleKeys) -> list[SignedEvent]:
    """EvaluationReported, RegressionDetected, DiagnosisCompleted, RepairProposed, RepairValidated, Published."""
    return repaired_incident(keys, "attested")


@pytest.fixture(scope="session")
def validated(incident: list[SignedEvent]) -> SignedEvent:
    source = incident[-2]
    assert source.event.meta.event_type == "RepairValidated"
    return source
