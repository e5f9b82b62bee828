"""The bench's probe of the broker's own share of a hop, on a real broker: every record comes back as sent, one wait
per record, and the probe's topic is gone afterwards."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from modelguard.bus_hop_probe import hop_latencies
from tests.support.broker import broker_topics, kafka_broker

pytestmark = pytest.mark.broker


def test_the_probe_times_each_record_it_sent_and_leaves_no_topic_behind(tmp_path: Path) -> None:
    with kafka_broker(tmp_path) as bootstrap:
        before = asyncio.run(broker_topics(bootstrap))

        measured = asyncio.run(hop_latencies(bootstrap, fetch_wait_ms=40, records=5, seed=7))

        assert measured.fetch_wait_ms == 40
        assert len(measured.seconds) == 5 and all(s > 0 for s in measured.seconds)
        assert "fetch wait 40 ms, 5 records" in measured.line()
        assert {t for t in asyncio.run(broker_topics(bootstrap)) if t.startswith("modelguard.probe.")} <= {
            t for t in before if t.startswith("modelguard.probe.")
        }


def test_the_probe_can_take_its_records_as_the_stacks_services_do_by_their_doorbell(tmp_path: Path) -> None:
    with kafka_broker(tmp_path) as bootstrap:
        measured = asyncio.run(hop_latencies(bootstrap, fetch_wait_ms=40, records=5, seed=7, doorbells=tmp_path / "b"))

    assert measured.rung and len(measured.seconds) == 5 and all(s > 0 for s in measured.seconds)
    assert "a consumer already waiting for its doorbell, fetch wait 40 ms, 5 records" in measured.line()
    assert list((tmp_path / "b").glob("*/*")) == []  # the probe's doorbell unregistered
