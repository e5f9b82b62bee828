"""The ledger service over the real broker keeps every dead letter in the ledger's database for the console: what
it refuses itself and what another service refuses, each once, with the refused bytes' digest and size, the
refusing service, the reason and where the input was; and it keeps consuming its events meanwhile."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterator

import pytest

from contracts.registry import DEAD_LETTER_TOPIC, contract_for
from libs.bus.producer import publish_raw, publish_signed
from libs.operations.dead_letter_store import DeadLetterStore, KeptDeadLetter
from libs.signing.keys import load_private_key
from tests.support.kafka_reader import read_topic
from tests.support.running_stack import RunningStack, running_stack
from tests.support.sample_events import reported
from tests.support.waiting import until

pytestmark = pytest.mark.broker

EVALUATIONS = contract_for("EvaluationReported").topic


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    with running_stack(tmp_path_factory.mktemp("stack"), services=("ledger",)) as running:
        yield running


class _Keys:
    def __init__(self, running: RunningStack) -> None:
        self.registry = running.registry
        self._dir = running.settings.keys_dir

    def __getitem__(self, owner: str):  # type: ignore[no-untyped-def]
        return load_private_key(owner, self._dir / f"{owner}.key")


def _kept(store: DeadLetterStore, count: int) -> list[KeptDeadLetter]:
    async def wait() -> bool:
        return await until(lambda: store.exists() and store.count() >= count, timeout_s=60)

    assert asyncio.run(wait()), f"the ledger service kept {store.count() if store.exists() else 0} of {count}"
    return store.newest(1000)


def test_the_ledger_keeps_each_dead_letter_with_the_digest_of_the_refused_bytes(stack: RunningStack) -> None:
    store = DeadLetterStore(stack.settings.ledger_url)
    script = b'<script>alert("refused")</script>'
    invalid_utf8 = b"\xff\xfe\xfd refused \xc3\x28"
    huge = b"<" + b"\x80" * (900 * 1024)
    good = reported(_Keys(stack), run_id="after-the-refusals")  # type: ignore[arg-type]

    async def send() -> None:
        for raw in (script, invalid_utf8, huge):
            await publish_raw(stack.bootstrap, EVALUATIONS, raw, key=b"<b>key</b>")
        await publish_signed(stack.bootstrap, [good])

    asyncio.run(send())
    kept = _kept(store, 3)
    on_topic = read_topic(stack.bootstrap, DEAD_LETTER_TOPIC, expected=3)
    assert len(kept) == len(on_topic) == 3
    sent = {hashlib.sha256(raw).hexdigest(): raw for raw in (script, invalid_utf8, huge)}
    by_digest = {letter.sha256: letter for letter in kept}
    assert set(by_digest) == set(sent)
    positions = {f"{r.topic}/{r.partition}@{r.offset}" for r in on_topic}
    for digest, letter in by_digest.items():
        assert letter.size == len(sent[digest])
        assert (letter.service, letter.reason) == ("ledger", "not-json")
        assert letter.source.startswith(f"{EVALUATIONS}/") and letter.key == "<b>key</b>"
        assert letter.position in positions
    assert {g.count for g in store.groups() if (g.service, g.reason) == ("ledger", "not-json")} == {3}

    async def appended() -> bool:
        return await until(lambda: stack.ledger.event(good.event.meta.event_id) is not None, timeout_s=60)

    assert asyncio.run(appended()), "the ledger kept appending events meanwhile"
    assert store.count() == 3, "each dead letter kept once"
