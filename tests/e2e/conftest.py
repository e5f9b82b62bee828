"""The whole stack over the real broker: the seven services as processes, as `make demo` runs them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from libs.ledger import LedgerStore
from libs.settings import Settings, load_settings
from libs.signing.keys import KeyRegistry
from modelguard.stack import SCENARIOS, StackState, stack_down, stack_up
from tests.support.broker import kafka_broker

CHURN = SCENARIOS / "churn-monthly-spend"


@dataclass
class RunningStack:
    settings: Settings
    state: StackState
    bootstrap: str

    @property
    def registry(self) -> KeyRegistry:
        return KeyRegistry.load(self.settings.key_registry_path)

    @property
    def ledger(self) -> LedgerStore:
        return LedgerStore(self.settings.ledger_url)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningStack]:
    home: Path = tmp_path_factory.mktemp("stack")
    previous = os.environ.get("MODELGUARD_HOME")
    os.environ["MODELGUARD_HOME"] = str(home)
    settings = load_settings()
    with kafka_broker(home) as bootstrap:
        state = stack_up(settings, bootstrap)
        try:
            yield RunningStack(settings, state, bootstrap)
        finally:
            stack_down(settings)
            if previous is None:
                os.environ.pop("MODELGUARD_HOME", None)
            else:
                os.environ["MODELGUARD_HOME"] = previous
