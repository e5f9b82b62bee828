"""The embedded stack for a test module: environment set and restored, a broker, the services as processes."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from libs.ledger import LedgerStore
from libs.settings import Settings, load_settings
from libs.signing.keys import KeyRegistry
from modelguard.stack import SERVICES, StackState, stack_down, stack_up
from tests.support.broker import kafka_broker


@dataclass
class StackHome:
    """The keys and the ledger a stack's settings point at."""

    settings: Settings

    @property
    def registry(self) -> KeyRegistry:
        return KeyRegistry.load(self.settings.key_registry_path)

    @property
    def ledger(self) -> LedgerStore:
        return LedgerStore(self.settings.ledger_url)


@dataclass
class RunningStack(StackHome):
    state: StackState
    bootstrap: str


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables for the block (service processes inherit them), then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextmanager
def running_stack(
    home: Path, env: Mapping[str, str] | None = None, services: tuple[str, ...] = SERVICES
) -> Iterator[RunningStack]:
    # the tests' brokers are new: read DataHub's topics from the start, so no record races the group's join
    with environment({"MODELGUARD_HOME": str(home), "MODELGUARD_MCL_START": "earliest", **(env or {})}):
        settings = load_settings()
        with kafka_broker(home) as bootstrap:
            state = stack_up(settings, bootstrap, services=services, owns_broker=True)
            try:
                yield RunningStack(settings, state, bootstrap)
            finally:
                stack_down(settings)
