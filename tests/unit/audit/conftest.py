"""A fresh SQLite ledger holding sample incidents signed with real keys."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from libs.ledger import LedgerStore
from tests.support.sample_events import SampleKeys


@pytest.fixture(scope="session")
def keys() -> SampleKeys:
    return SampleKeys.generate()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[LedgerStore]:
    ledger = LedgerStore(f"sqlite:///{tmp_path / 'ledger.db'}")
    ledger.create_schema()
    yield ledger
    ledger.close()
