"""The loopback fakes' `hold`: the race tests rely on every held party reading the state from before any of them
acts. A party's answer is made when it arrives, not when the barrier lets it go, so a write that lands while the
first party waits (a quicker racer's, on a machine slow to schedule the second) does not show in its answer."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request

from tests.support.fake_datahub_gms import FakeDataHubGms

URN = "urn:li:incident:modelguard-0123456789abcdef"
PATH = "/aspects/urn%3Ali%3Aincident%3Amodelguard-0123456789abcdef?aspect=incidentInfo&version=0"


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as refused:
        return refused.code


def _wait_for_requests(gms: FakeDataHubGms, count: int) -> None:
    deadline = time.monotonic() + 30
    while gms.count("GET") < count:
        assert time.monotonic() < deadline, f"the fake never saw {count} reads"
        time.sleep(0.005)


def test_a_held_read_answers_as_things_stood_when_it_arrived() -> None:
    with FakeDataHubGms() as gms:
        assert isinstance(gms, FakeDataHubGms)
        gms.hold("GET", r"^/aspects/urn(%3A|:)li(%3A|:)incident", parties=2)
        statuses: list[int] = []
        first = threading.Thread(target=lambda: statuses.append(_status(gms.base_url + PATH)))
        first.start()
        _wait_for_requests(gms, 1)  # the first party has arrived and waits for the second
        gms.put_aspect(URN, "incidentInfo", {"title": "written while the first party waited"})
        statuses.append(_status(gms.base_url + PATH))  # the second party: it arrives after the write
        first.join(timeout=30)

        assert not first.is_alive()
        # the first read "no incident yet" (it arrived before the write), the second read the write
        assert sorted(statuses) == [200, 404]
        assert gms.count("GET") == 2 and gms.aspect(URN, "incidentInfo") is not None
